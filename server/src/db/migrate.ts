import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "drizzle-orm";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { resultRows, type Database, type DatabaseHandle } from "./database.js";

/** The committed SQL migrations, written by drizzle-kit from the schema files (`*-schema.ts`). */
export const migrationsFolder = join(dirname(fileURLToPath(import.meta.url)), "../../migrations");

interface JournalEntry {
  readonly tag: string;
  readonly when: number;
}

/**
 * Applies the pending migrations with drizzle's migrator, under a lock that other server
 * processes on the same PostgreSQL respect, and reports each migration it applies.
 */
export async function migrateDatabase(handle: DatabaseHandle, progress: (line: string) => void): Promise<void> {
  const journal = JSON.parse(await readFile(join(migrationsFolder, "meta/_journal.json"), "utf8")) as {
    entries: JournalEntry[];
  };
  const count = readMigrationFiles({ migrationsFolder }).length;
  await handle.withMigrationLock(async () => {
    const applied = await lastAppliedMillis(handle.db);
    const pending = journal.entries.filter((entry) => entry.when > applied);
    if (pending.length === 0) {
      progress(`database schema is current (${count} migrations)`);
      return;
    }
    for (const entry of pending) progress(`applying migration ${entry.tag}`);
    const started = Date.now();
    // drizzle applies every pending migration in one transaction: all or nothing.
    await handle.applyMigrations(migrationsFolder);
    progress(`applied ${pending.length} migration(s) in ${Date.now() - started} ms`);
  });
}

async function lastAppliedMillis(db: Database): Promise<number> {
  const exists = await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`);
  if (!resultRows<{ present: boolean }>(exists)[0]?.present) return 0;
  const last = await db.execute(
    sql`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`,
  );
  return Number(resultRows<{ created_at: string | number }>(last)[0]?.created_at ?? 0);
}
