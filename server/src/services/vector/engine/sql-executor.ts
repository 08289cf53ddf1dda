import type { PGlite, Transaction } from "@electric-sql/pglite";
import type { Sql, TransactionSql } from "postgres";

/** A value bound to a `$n` placeholder. Vectors travel as pgvector's text form (`[1,2,3]`). */
export type SqlParam = string | number | boolean | null | readonly string[] | readonly number[];

/**
 * The little the vector engine needs from a database: parameterised statements and transactions.
 * It runs on the platform's own database, on an embedded PGlite of its own, or on an external
 * PostgreSQL with pgvector, through one of the adapters below; nothing else in the engine knows
 * which. Statements are raw SQL because collection tables are created at run time (one per
 * collection, named by its physical name), which an ORM schema cannot declare.
 */
export interface SqlExecutor {
  /** Runs one statement; answers its rows. */
  query<Row extends object = Record<string, unknown>>(text: string, params?: readonly SqlParam[]): Promise<Row[]>;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** An executor over a PGlite instance (which must have been created with the pgvector extension). */
export function pgliteExecutor(db: PGlite | Transaction): SqlExecutor {
  return {
    async query<Row extends object>(text: string, params: readonly SqlParam[] = []) {
      const result = await db.query<Row>(text, params as unknown[]);
      return result.rows;
    },
    transaction(work) {
      // PGlite has no nested transactions: a transaction executor runs its work in place.
      if (!("transaction" in db)) return work(pgliteExecutor(db));
      return db.transaction((tx) => work(pgliteExecutor(tx)));
    },
  };
}

/** An executor over a postgres-js client (the platform's pool, or one opened on an external database). */
export function postgresExecutor(sql: Sql | TransactionSql): SqlExecutor {
  return {
    async query<Row extends object>(text: string, params: readonly SqlParam[] = []) {
      // `unsafe` is postgres-js's entry for statements built at run time; every value is still bound.
      const rows = await sql.unsafe(text, params as never[]);
      return rows as unknown as Row[];
    },
    async transaction(work) {
      if (!("begin" in sql)) return work(postgresExecutor(sql));
      return (await sql.begin((tx) => work(postgresExecutor(tx)))) as Awaited<ReturnType<typeof work>>;
    },
  };
}

/**
 * An executor on the platform's own database (server/src/db: the drizzle handle of either
 * engine), through the driver client drizzle wraps, so collections live beside the platform's
 * tables with no second connection pool.
 */
export function platformExecutor(handle: { readonly db: object; readonly kind: "embedded" | "postgres" }): SqlExecutor {
  const client = (handle.db as { $client?: unknown }).$client;
  if (client === undefined) throw new Error("the platform database handle exposes no driver client");
  return handle.kind === "embedded" ? pgliteExecutor(client as PGlite) : postgresExecutor(client as Sql);
}
