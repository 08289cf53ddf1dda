import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import postgres from "postgres";
import { postgresExecutor, type SqlExecutor, type SqlParam } from "./engine/sql-executor.js";
import type { DatabaseKind } from "./vector-schema.js";

/** An open connection to one vector database: what the engine core runs on. */
export interface VectorConnection {
  readonly executor: SqlExecutor;
  close(): Promise<void>;
}

/**
 * Where auto engines get their databases. On PostgreSQL (DATABASE_URL) a database of its own per
 * engine on the same server; on the embedded default a schema per engine in one embedded database
 * (`<data-dir>/vector-db`). Not one PGlite per bucket: each instance holds its own WebAssembly
 * PostgreSQL of about 250 MiB, so a few buckets would exhaust a small server, while schemas in one
 * instance cost nothing and still keep buckets' tables apart.
 */
export interface VectorDbHost {
  readonly kind: DatabaseKind;
  /** Creates the database (or schema) with the vector extension; nothing happens when it exists. */
  create(name: string): Promise<void>;
  /** Drops it with everything in it; nothing happens when it is gone. */
  drop(name: string): Promise<void>;
  connect(name: string): Promise<VectorConnection>;
  close(): Promise<void>;
}

/** Provisioned names are generated (`vector_` and 32 hex digits), never taken from a request. */
const DATABASE_NAME = /^vector_[0-9a-f]{32}$/;

export function vectorDatabaseName(databaseId: string): string {
  return `vector_${databaseId.replace(/-/g, "").toLowerCase()}`;
}

function checkedName(name: string): string {
  if (!DATABASE_NAME.test(name)) throw new Error(`not a provisioned vector database name: ${name}`);
  return `"${name}"`;
}

/** Databases of their own on the platform's PostgreSQL server (its user needs CREATEDB). */
export function postgresVectorDbHost(databaseUrl: string, connectionsPerDatabase = 4): VectorDbHost {
  let admin: postgres.Sql | undefined;
  const adminClient = () => (admin ??= postgres(databaseUrl, { max: 1, onnotice: () => {} }));
  const urlOf = (name: string) => {
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    kind: "postgres",
    async create(name) {
      const quoted = checkedName(name);
      const sql = adminClient();
      const found = await sql`select 1 from pg_database where datname = ${name}`;
      // CREATE DATABASE cannot run in a transaction nor take IF NOT EXISTS: look first, and take a
      // concurrent creation (duplicate_database) as done.
      if (found.length === 0) {
        try {
          await sql.unsafe(`CREATE DATABASE ${quoted}`);
        } catch (error) {
          if ((error as { code?: string }).code !== "42P04") throw error;
        }
      }
      const target = postgres(urlOf(name), { max: 1, onnotice: () => {} });
      try {
        await target.unsafe(`CREATE EXTENSION IF NOT EXISTS vector`);
      } finally {
        await target.end({ timeout: 5 });
      }
    },
    async drop(name) {
      await adminClient().unsafe(`DROP DATABASE IF EXISTS ${checkedName(name)} WITH (FORCE)`);
    },
    async connect(name) {
      checkedName(name);
      const client = postgres(urlOf(name), { max: connectionsPerDatabase, onnotice: () => {} });
      return { executor: postgresExecutor(client), close: () => client.end({ timeout: 5 }) };
    },
    async close() {
      await admin?.end({ timeout: 5 });
      admin = undefined;
    },
  };
}

/**
 * Schemas of one embedded PGlite with pgvector in `<dataDir>/vector-db` (`memory://` in tests),
 * opened on first use so a server that never stores vectors never pays for it.
 */
export function embeddedVectorDbHost(dataDir: string): VectorDbHost {
  let opening: Promise<PGlite> | undefined;
  const instance = () =>
    (opening ??= (async () => {
      const inMemory = dataDir === "memory://";
      const path = inMemory ? dataDir : join(dataDir, "vector-db");
      if (!inMemory) await mkdir(path, { recursive: true });
      const db = await PGlite.create({ dataDir: path, extensions: { vector } });
      await db.exec(`CREATE EXTENSION IF NOT EXISTS vector`);
      return db;
    })());
  return {
    kind: "embedded",
    async create(name) {
      const quoted = checkedName(name);
      await (await instance()).exec(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    },
    async drop(name) {
      const quoted = checkedName(name);
      await (await instance()).exec(`DROP SCHEMA IF EXISTS ${quoted} CASCADE`);
    },
    async connect(name) {
      const quoted = checkedName(name);
      // Closing a schema's connection leaves the shared instance open; close() below ends it.
      return { executor: schemaExecutor(await instance(), quoted), close: async () => {} };
    },
    async close() {
      const pending = opening;
      opening = undefined;
      if (pending) await (await pending).close();
    },
  };
}

/**
 * An executor confined to one schema of a shared PGlite: every statement runs in a transaction
 * that first sets the search path (`public` stays on it for pgvector's types and operators).
 * PGlite runs one transaction at a time, so no other schema's statement can slip in between.
 */
function schemaExecutor(db: PGlite, quotedSchema: string): SqlExecutor {
  const searchPath = `SET LOCAL search_path TO ${quotedSchema}, public`;
  const inTransaction = (tx: Transaction): SqlExecutor => ({
    async query<Row extends object>(text: string, params: readonly SqlParam[] = []) {
      return (await tx.query<Row>(text, params as unknown[])).rows;
    },
    // PGlite has no nested transactions: a transaction's work runs in place.
    transaction: (work) => work(inTransaction(tx)),
  });
  return {
    query<Row extends object>(text: string, params: readonly SqlParam[] = []) {
      return db.transaction(async (tx) => {
        await tx.exec(searchPath);
        return (await tx.query<Row>(text, params as unknown[])).rows;
      });
    },
    transaction(work) {
      return db.transaction(async (tx) => {
        await tx.exec(searchPath);
        return work(inTransaction(tx));
      });
    },
  };
}
