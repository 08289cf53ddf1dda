import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { VectorMetric, VectorRecord } from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
import { HNSW_EF_CONSTRUCTION, HNSW_M } from "../engine/collection-tables.js";
import type { SqlExecutor } from "../engine/sql-executor.js";
import { MAX_INDEXED_DIMENSION } from "./vector-limits.js";
import { METRICS, type MetricSql } from "./vector-metric.js";
import { checkBatchSize, vectorRows, vectorText } from "./vector-records.js";
import { vectorTableName } from "./vector-table-name.js";
import { sqlErrorOf, vectorTableShape } from "./vector-table-shape.js";

export interface VectorQuery {
  readonly vector: readonly number[];
  readonly topK: number;
  readonly metric: MetricSql;
  readonly includeMetadata: boolean;
  readonly includeValues: boolean;
}

export interface VectorMatchRow {
  readonly id: string;
  readonly score: number;
  readonly metadata?: JsonObject;
  readonly values?: number[];
}

export interface VectorTableInfo {
  readonly dimension: number;
  readonly count: bigint;
  readonly indexedMetrics: VectorMetric[];
}

/**
 * One plain vector table, `(id text PRIMARY KEY, embedding vector(n), metadata jsonb)`, in the
 * current schema of an engine database: the table the data-plane vector API writes and a SQL
 * client reads. Its dimension is whatever the catalog says, read on every call, because a SQL
 * client may create, alter or drop the table at any time.
 */
export class PlainVectorTable {
  readonly #executor: SqlExecutor;
  readonly #name: string;
  readonly #quoted: string;

  constructor(executor: SqlExecutor, name: string) {
    this.#executor = executor;
    this.#quoted = vectorTableName(name);
    this.#name = name;
  }

  /** Inserts or replaces the vectors in one transaction, creating the table on first use. */
  upsert(vectors: readonly VectorRecord[]): Promise<{ count: number; dimension: number; created: boolean }> {
    // The checks run inside the transaction, against the table's dimension once known: a bad
    // batch rolls back the table its first vector would have created.
    checkBatchSize(vectors);
    return this.#guard(() =>
      this.#executor.transaction(async (tx) => {
        let dimension = await vectorTableShape(tx, this.#name);
        let created = false;
        if (dimension === undefined) {
          // Two first upserts race to create the table: the second waits, then finds it.
          await tx.query(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.' || $1))`, [
            `vector-table:${this.#name}`,
          ]);
          dimension = await vectorTableShape(tx, this.#name);
          if (dimension === undefined) {
            dimension = vectors[0]!.values.length;
            // The dimension must be one vector(n) takes (1 to 16,000) before it reaches the DDL.
            vectorText(vectors[0]!.values, dimension, "vectors[0].values", "");
            await tx.query(
              `CREATE TABLE ${this.#quoted} (id text PRIMARY KEY, embedding vector(${dimension}) NOT NULL, metadata jsonb)`,
            );
            created = true;
          }
        }
        const reason = created
          ? `vectors[0] has ${dimension}, which table ${this.#name} is created with`
          : `table ${this.#name} holds vectors of ${dimension}`;
        const rows = vectorRows(vectors, dimension, reason);
        await tx.query(
          `INSERT INTO ${this.#quoted} (id, embedding, metadata)
           SELECT id, embedding::vector, NULLIF(metadata, 'null')::jsonb
           FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, embedding, metadata)
           ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding, metadata = excluded.metadata`,
          [rows.map((row) => row.id), rows.map((row) => row.embedding), rows.map((row) => row.metadata ?? "null")],
        );
        return { count: rows.length, dimension, created };
      }),
    );
  }

  /** The topK nearest vectors, nearest first; the score is pgvector's distance for the metric. */
  query(query: VectorQuery): Promise<VectorMatchRow[]> {
    return this.#guard(() =>
      this.#executor.transaction(async (tx) => {
        const dimension = await this.#existing(tx);
        const literal = vectorText(
          query.vector,
          dimension,
          "vector",
          `table ${this.#name} holds vectors of ${dimension}`,
        );
        if (query.metric.indexSuffix === "cosine" && query.vector.every((value) => value === 0))
          throw new ConnectError(
            "vector must not be all zeros: its cosine distance is undefined",
            Code.InvalidArgument,
          );
        // An HNSW walk returns at most ef_search rows: widen it so that topK rows can come back
        // (pgvector's ceiling is 1,000, the largest topK).
        await tx.query(`SELECT set_config('hnsw.ef_search', $1, true)`, [String(Math.max(40, query.topK))]);
        const distance = `embedding ${query.metric.operator} $1::vector`;
        const columns = [
          "id",
          `${distance} AS score`,
          ...(query.includeMetadata ? ["metadata"] : []),
          ...(query.includeValues ? ["embedding::text AS embedding"] : []),
        ];
        const rows = await tx.query<{ id: string; score: number; metadata?: unknown; embedding?: string }>(
          `SELECT ${columns.join(", ")} FROM ${this.#quoted} ORDER BY ${distance} LIMIT $2`,
          [literal, query.topK],
        );
        return rows.map((row) => ({
          id: row.id,
          score: Number(row.score),
          ...(row.metadata !== undefined && row.metadata !== null ? { metadata: jsonObject(row.metadata) } : {}),
          ...(row.embedding !== undefined ? { values: JSON.parse(row.embedding) as number[] } : {}),
        }));
      }),
    );
  }

  /** Deletes the ids, or every row; a table that does not exist deletes nothing. */
  delete(target: { readonly ids: readonly string[] } | { readonly all: true }): Promise<number> {
    return this.#guard(() =>
      this.#executor.transaction(async (tx) => {
        if ((await vectorTableShape(tx, this.#name)) === undefined) return 0;
        const [row] =
          "ids" in target
            ? await tx.query<{ n: number }>(
                `WITH gone AS (DELETE FROM ${this.#quoted} WHERE id = ANY($1::text[]) RETURNING 1) SELECT count(*)::int AS n FROM gone`,
                [target.ids],
              )
            : await tx.query<{ n: number }>(
                `WITH gone AS (DELETE FROM ${this.#quoted} RETURNING 1) SELECT count(*)::int AS n FROM gone`,
              );
        return Number(row?.n ?? 0);
      }),
    );
  }

  describe(): Promise<VectorTableInfo> {
    return this.#guard(() => this.#executor.transaction((tx) => this.#describe(tx)));
  }

  /** Builds the HNSW index of one metric (nothing happens when it exists); answers the table. */
  createIndex(metric: MetricSql): Promise<VectorTableInfo> {
    return this.#guard(() =>
      this.#executor.transaction(async (tx) => {
        const dimension = await this.#existing(tx);
        if (dimension > MAX_INDEXED_DIMENSION)
          throw new ConnectError(
            `table ${this.#name} holds vectors of ${dimension} dimensions; an HNSW index takes at most ${MAX_INDEXED_DIMENSION}`,
            Code.FailedPrecondition,
          );
        await tx.query(
          `CREATE INDEX IF NOT EXISTS "${this.#name}__hnsw_${metric.indexSuffix}" ON ${this.#quoted}
           USING hnsw (embedding ${metric.operatorClass}) WITH (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION})`,
        );
        return this.#describe(tx);
      }),
    );
  }

  async #describe(tx: SqlExecutor): Promise<VectorTableInfo> {
    const dimension = await this.#existing(tx);
    const [count] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${this.#quoted}`);
    // Any HNSW index on the embedding counts, whoever built it: a SQL client's serves queries too.
    const classes = await tx.query<{ opcname: string }>(
      `SELECT DISTINCT o.opcname
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       JOIN pg_class x ON x.oid = i.indexrelid
       JOIN pg_am am ON am.oid = x.relam
       JOIN pg_opclass o ON o.oid = i.indclass[0]
       WHERE n.nspname = current_schema() AND t.relname = $1 AND am.amname = 'hnsw'`,
      [this.#name],
    );
    const present = new Set(classes.map((row) => row.opcname));
    return {
      dimension,
      count: BigInt(count?.n ?? "0"),
      indexedMetrics: METRICS.filter((metric) => present.has(metric.operatorClass)).map((metric) => metric.metric),
    };
  }

  async #existing(tx: SqlExecutor): Promise<number> {
    const dimension = await vectorTableShape(tx, this.#name);
    if (dimension === undefined) throw new ConnectError(`table ${this.#name} does not exist`, Code.NotFound);
    return dimension;
  }

  /** Database errors a SQL client can provoke (a table dropped or altered meanwhile) become API errors. */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw sqlErrorOf(error, this.#name);
    }
  }
}

function jsonObject(value: unknown): JsonObject {
  const parsed = (typeof value === "string" ? JSON.parse(value) : value) as JsonObject[string];
  // A SQL client may have stored a JSON scalar or array; the API's metadata is an object.
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? (parsed as JsonObject)
    : { value: parsed };
}
