import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { lockDataDir } from "./data-dir-lock.js";

/**
 * The drizzle database every store uses, whichever engine is behind it. Stores query the tables
 * their own schema files declare (`<service>-schema.ts`), so this layer knows none of them.
 */
export type Database = PgDatabase<PgQueryResultHKT>;

export interface DatabaseHandle {
  readonly db: Database;
  /** `embedded`: PGlite in the data directory, one process only; `postgres`: a PostgreSQL server. */
  readonly kind: "embedded" | "postgres";
  /** Runs `work` holding a lock that other server processes on the same database respect. */
  withMigrationLock<T>(work: () => Promise<T>): Promise<T>;
  /** Applies the pending migrations of a folder with drizzle's migrator for this engine. */
  applyMigrations(migrationsFolder: string): Promise<void>;
  /**
   * LISTEN on a channel: `handler` gets each NOTIFY payload, from this process or (on
   * PostgreSQL) any other server on the same database. `onListening` runs each time the LISTEN
   * is in place: once at first, and again after the listening connection was lost and made
   * anew, when notifications sent in between are gone. Returns the unlisten function.
   */
  listen(channel: string, handler: (payload: string) => void, onListening?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL connection URL; without it, the embedded database in `dataDir` is used. */
  readonly databaseUrl?: string | undefined;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  readonly dataDir: string;
  /** Connections in the pool (PostgreSQL only). */
  readonly maxConnections?: number;
}

/** An arbitrary constant naming the platform's migration lock among PostgreSQL advisory locks. */
const MIGRATION_LOCK = 4_081_726_350;

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections ?? 10);
  return openEmbedded(options.dataDir);
}

async function openEmbedded(dataDir: string): Promise<DatabaseHandle> {
  const inMemory = dataDir === "memory://";
  const pgdata = inMemory ? dataDir : join(dataDir, "pgdata");
  let unlock = async () => {};
  if (!inMemory) {
    await mkdir(pgdata, { recursive: true });
    unlock = await lockDataDir(dataDir);
  }
  let client: PGlite;
  try {
    client = await PGlite.create({ dataDir: pgdata, extensions: { vector } });
  } catch (error) {
    await unlock();
    throw error;
  }
  const drizzleDb = drizzlePglite({ client });
  return {
    db: drizzleDb as unknown as Database,
    kind: "embedded",
    // One process owns an embedded database: nothing else can be migrating it.
    withMigrationLock: (work) => work(),
    applyMigrations: (migrationsFolder) => migratePglite(drizzleDb, { migrationsFolder }),
    // One process, one connection that cannot drop: listening starts once and never lapses.
    async listen(channel, handler, onListening) {
      const unlisten = await client.listen(channel, handler);
      onListening?.();
      return unlisten;
    },
    async close() {
      await client.close();
      await unlock();
    },
  };
}

async function openPostgres(url: string, max: number): Promise<DatabaseHandle> {
  const client = postgres(url, { max, onnotice: () => {} });
  const drizzleDb = drizzlePostgres({ client });
  await client`select 1`;
  return {
    db: drizzleDb as unknown as Database,
    kind: "postgres",
    applyMigrations: (migrationsFolder) => migratePostgres(drizzleDb, { migrationsFolder }),
    async listen(channel, handler, onListening) {
      // postgres.js calls `onListening` on every LISTEN it sends, the first and each re-LISTEN
      // after its listening connection closed.
      const { unlisten } = await client.listen(channel, handler, onListening);
      return unlisten;
    },
    async withMigrationLock(work) {
      // The session lock is held on one reserved connection while the work runs on the pool:
      // another process blocks on the same lock until this one has finished.
      const connection = await client.reserve();
      try {
        await connection`select pg_advisory_lock(${MIGRATION_LOCK})`;
        return await work();
      } finally {
        await connection`select pg_advisory_unlock(${MIGRATION_LOCK})`.catch(() => {});
        connection.release();
      }
    },
    close: () => client.end({ timeout: 5 }),
  };
}

/** The rows of `db.execute(sql...)`: PGlite answers `{rows}`, postgres-js an array of rows. */
export function resultRows<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}
