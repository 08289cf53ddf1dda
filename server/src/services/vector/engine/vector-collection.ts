import { Code, ConnectError } from "@connectrpc/connect";
import { chunkTerms } from "./bm25-terms.js";
import {
  collectionTables,
  createCollectionStatements,
  dropCollectionStatements,
  MAX_DIMENSIONS,
  type CollectionTables,
} from "./collection-tables.js";
import type { SqlExecutor } from "./sql-executor.js";
import { vectorLiteral } from "./vector-literal.js";

/** One chunk of an object, as the index pipeline produces it. */
export interface ChunkInput {
  /** Position of the chunk in its object, from 0; the chunk id is `source_key#chunk_index`. */
  readonly chunkIndex: number;
  readonly content: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly embedding: ArrayLike<number>;
  /** Partition the chunk belongs to (VectorInput.partition_names); '' is the default partition. */
  readonly partition?: string;
}

export interface CollectionOptions {
  /** The generated `<prefix>_<uuid>` of destination.vector.physicalName. */
  readonly physicalName: string;
  readonly dimensions: number;
}

/**
 * One collection's tables in one database: created on the first upsert, written one object at a
 * time, dropped with the collection. Every write is one transaction that first locks the
 * collection's statistics row, so concurrent writers of one collection queue instead of
 * deadlocking on BM25's shared document frequencies, and readers always see whole objects.
 */
export class VectorCollection {
  readonly tables: CollectionTables;
  readonly dimensions: number;
  #ready = false;

  constructor(
    readonly executor: SqlExecutor,
    readonly options: CollectionOptions,
  ) {
    this.tables = collectionTables(options.physicalName);
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1 || options.dimensions > MAX_DIMENSIONS)
      throw new ConnectError(`dimensions must be an integer from 1 to ${MAX_DIMENSIONS}`, Code.InvalidArgument);
    this.dimensions = options.dimensions;
  }

  /** Whether the tables exist (a collection is created lazily on its first upsert). */
  async exists(): Promise<boolean> {
    if (this.#ready) return true;
    const [row] = await this.executor.query<{ found: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS found`, [
      this.tables.chunks,
    ]);
    return row?.found === true;
  }

  /** Creates the tables when missing; FAILED_PRECONDITION when they exist with other dimensions. */
  async ensure(): Promise<void> {
    if (this.#ready) return;
    await this.executor.transaction(async (tx) => {
      // Two first upserts racing would both try to create the tables (and their row type).
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`vector-collection:${this.options.physicalName}`]);
      for (const statement of createCollectionStatements(this.tables, this.dimensions)) await tx.query(statement);
      const [column] = await tx.query<{ type: string }>(
        `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'`,
        [this.tables.chunks],
      );
      if (column?.type !== `vector(${this.dimensions})`)
        throw new ConnectError(
          `collection ${this.options.physicalName} stores ${column?.type ?? "no embedding"}, not vector(${this.dimensions})`,
          Code.FailedPrecondition,
        );
    });
    this.#ready = true;
  }

  /**
   * Replaces every chunk of one object with `chunks` in one transaction (an empty list deletes the
   * object), keeping BM25's statistics (document frequencies, lengths, count) in step.
   */
  async upsertObject(sourceKey: string, chunks: readonly ChunkInput[]): Promise<void> {
    if (typeof sourceKey !== "string" || sourceKey === "") throw invalid("sourceKey must not be empty");
    const rows = chunks.map((chunk, index) => this.#checkedRow(sourceKey, chunk, index));
    const seen = new Set<number>();
    for (const row of rows) {
      if (seen.has(row.chunkIndex)) throw invalid(`chunks: chunk_index ${row.chunkIndex} appears twice`);
      seen.add(row.chunkIndex);
    }
    await this.ensure();
    const { chunks: table, terms, df, stats } = this.tables;
    await this.executor.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM ${stats} FOR UPDATE`);
      await this.#removeObject(tx, sourceKey);
      if (rows.length === 0) return;
      await tx.query(
        `INSERT INTO ${table} (id, source_key, chunk_index, content, metadata, embedding, partition, doc_length)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[]::jsonb[], $6::text[]::vector[], $7::text[], $8::int[])`,
        [
          rows.map((r) => r.id),
          rows.map(() => sourceKey),
          rows.map((r) => r.chunkIndex),
          rows.map((r) => r.content),
          rows.map((r) => r.metadata),
          rows.map((r) => r.embedding),
          rows.map((r) => r.partition),
          rows.map((r) => r.terms.length),
        ],
      );
      const postings = rows.flatMap((r) => [...r.terms.frequencies].map(([term, tf]) => ({ term, id: r.id, tf })));
      if (postings.length > 0) {
        await tx.query(`INSERT INTO ${terms} (term, id, tf) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])`, [
          postings.map((p) => p.term),
          postings.map((p) => p.id),
          postings.map((p) => p.tf),
        ]);
        // Ordered by term so that the row locks are always taken in one order.
        await tx.query(
          `INSERT INTO ${df} AS d (term, df)
           SELECT term, count(*)::int FROM unnest($1::text[]) AS u(term) GROUP BY term ORDER BY term
           ON CONFLICT (term) DO UPDATE SET df = d.df + EXCLUDED.df`,
          [postings.map((p) => p.term)],
        );
      }
      await tx.query(`UPDATE ${stats} SET doc_count = doc_count + $1, total_length = total_length + $2`, [
        rows.length,
        rows.reduce((sum, r) => sum + r.terms.length, 0),
      ]);
    });
  }

  /** Deletes every chunk of one object; answers how many there were. */
  async deleteObject(sourceKey: string): Promise<number> {
    if (!(await this.exists())) return 0;
    return this.executor.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM ${this.tables.stats} FOR UPDATE`);
      return this.#removeObject(tx, sourceKey);
    });
  }

  /** Drops the collection's tables; nothing happens when they were never created. */
  async drop(): Promise<void> {
    await this.executor.transaction(async (tx) => {
      for (const statement of dropCollectionStatements(this.tables)) await tx.query(statement);
    });
    this.#ready = false;
  }

  /** Rows stored, from the statistics row (no table scan). */
  async count(): Promise<number> {
    if (!(await this.exists())) return 0;
    const [row] = await this.executor.query<{ n: number }>(`SELECT doc_count::int AS n FROM ${this.tables.stats}`);
    return row?.n ?? 0;
  }

  /** Takes the object's chunks out of BM25's statistics, then deletes them (their postings cascade). */
  async #removeObject(tx: SqlExecutor, sourceKey: string): Promise<number> {
    const { chunks, terms, df, stats } = this.tables;
    // Terms whose df reaches 0 keep their row: a vocabulary-sized table, reused when the term returns.
    await tx.query(
      `WITH gone AS (
         SELECT t.term, count(*)::int AS n FROM ${terms} t JOIN ${chunks} c ON c.id = t.id
         WHERE c.source_key = $1 GROUP BY t.term)
       UPDATE ${df} d SET df = d.df - gone.n FROM gone WHERE d.term = gone.term`,
      [sourceKey],
    );
    const [removed] = await tx.query<{ n: number }>(
      `WITH gone AS (DELETE FROM ${chunks} WHERE source_key = $1 RETURNING doc_length),
       totals AS (SELECT count(*)::int AS n, coalesce(sum(doc_length), 0)::bigint AS len FROM gone),
       updated AS (UPDATE ${stats} s SET doc_count = s.doc_count - totals.n, total_length = s.total_length - totals.len FROM totals)
       SELECT n FROM totals`,
      [sourceKey],
    );
    return removed?.n ?? 0;
  }

  #checkedRow(sourceKey: string, chunk: ChunkInput, index: number) {
    const field = `chunks[${index}]`;
    if (!Number.isInteger(chunk.chunkIndex) || chunk.chunkIndex < 0 || chunk.chunkIndex > 2 ** 31 - 1)
      throw invalid(`${field}.chunkIndex must be a non-negative integer`);
    if (typeof chunk.content !== "string") throw invalid(`${field}.content must be a string`);
    if (typeof chunk.metadata !== "object" || chunk.metadata === null || Array.isArray(chunk.metadata))
      throw invalid(`${field}.metadata must be an object`);
    const partition = chunk.partition ?? "";
    if (typeof partition !== "string" || partition.length > 255)
      throw invalid(`${field}.partition must be a string of at most 255 characters`);
    return {
      id: `${sourceKey}#${chunk.chunkIndex}`,
      chunkIndex: chunk.chunkIndex,
      content: chunk.content,
      metadata: JSON.stringify(chunk.metadata),
      embedding: vectorLiteral(chunk.embedding, this.dimensions, `${field}.embedding`),
      partition,
      terms: chunkTerms(chunk.content),
    };
  }
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
