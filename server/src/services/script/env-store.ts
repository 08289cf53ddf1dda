import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import type { Database } from "../../db/database.js";
import { envVars, scriptEnvVars } from "./script-schema.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { openEnvValue, sealEnvValue } from "./env-sealing.js";

/** One environment variable as the store hands it out. */
export interface EnvEntry {
  readonly key: string;
  readonly value: string;
}

/** Changes to a script's overlay: entries to upsert and keys to remove. */
export interface OverlayChanges {
  readonly set: Readonly<Record<string, string>>;
  readonly delete: readonly string[];
}

/**
 * Rows (or keys) per statement: PostgreSQL's wire protocol caps a statement at 65,535 parameters, and
 * an import or an overlay update can carry more entries than that divided by the columns bound per row.
 */
const ROWS_PER_STATEMENT = 1_000;

/** The database time, in epoch milliseconds, the same expression the schema's defaults use. */
const nowMs = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * Keys sort by code point on both engines: PGlite's and a server's default collations differ, and the
 * contract's "sorted by key ascending" must not depend on the database's locale.
 */
const byCodePoint = (column: AnyPgColumn): SQL => sql`${column} collate "C"`;

/**
 * Queries of the script service's environment variables: the organization's tenant variables
 * (`env_vars`) and each script's overlay (`script_env_vars`). Every query is filtered by org_id, so
 * another organization's variables are simply not there. Values are sealed by `box` on the way in
 * and opened on the way out (env-sealing.ts); the database never sees them in clear. Inputs are
 * assumed valid (see key-rules.ts); the store only reads and writes.
 */
export function createEnvStore(db: Database, box: SecretBox) {
  return {
    /** Creates or overwrites one tenant variable. */
    async setEnvVar(orgId: string, key: string, value: string): Promise<void> {
      await upsertTenant(db, box, orgId, [[key, value]]);
    },

    /** The value of one tenant variable, or undefined when it is not set. */
    async getEnvVar(orgId: string, key: string): Promise<string | undefined> {
      const [row] = await db
        .select({ sealedValue: envVars.sealedValue })
        .from(envVars)
        .where(and(eq(envVars.orgId, orgId), eq(envVars.key, key)));
      return row && openEnvValue(box, { orgId, key }, row.sealedValue);
    },

    /** Every tenant variable, sorted by key ascending. */
    async listEnvVars(orgId: string): Promise<EnvEntry[]> {
      const rows = await db
        .select({ key: envVars.key, sealedValue: envVars.sealedValue })
        .from(envVars)
        .where(eq(envVars.orgId, orgId))
        .orderBy(asc(byCodePoint(envVars.key)));
      return rows.map(({ key, sealedValue }) => ({ key, value: openEnvValue(box, { orgId, key }, sealedValue) }));
    },

    /** Deletes one tenant variable; answers whether it existed. */
    async deleteEnvVar(orgId: string, key: string): Promise<boolean> {
      const deleted = await db
        .delete(envVars)
        .where(and(eq(envVars.orgId, orgId), eq(envVars.key, key)))
        .returning({ key: envVars.key });
      return deleted.length > 0;
    },

    /**
     * Sets many tenant variables at once, all or nothing: existing keys are overwritten, new keys
     * added, others untouched. Answers how many were imported (created or overwritten).
     */
    async importEnvVars(orgId: string, vars: Readonly<Record<string, string>>): Promise<number> {
      const entries = Object.entries(vars);
      await db.transaction((tx) => upsertTenant(tx, box, orgId, entries));
      return entries.length;
    },

    /** The overlay of one script, sorted by key ascending; empty when it has none. */
    async getScriptEnv(orgId: string, scriptName: string): Promise<EnvEntry[]> {
      return readOverlay(db, box, orgId, scriptName);
    },

    /**
     * Applies changes to a script's overlay in one transaction and returns the full resulting
     * overlay, sorted by key. Empty values are stored as they are (they let the tenant value pass
     * through at thread start); deleting an absent key does nothing. Seeding an overlay at script
     * creation is the same call on an empty overlay.
     */
    async updateScriptEnv(orgId: string, scriptName: string, changes: OverlayChanges): Promise<EnvEntry[]> {
      return db.transaction(async (tx) => {
        await upsertOverlay(tx, box, orgId, scriptName, Object.entries(changes.set));
        for (const keys of chunks(changes.delete)) {
          await tx
            .delete(scriptEnvVars)
            .where(
              and(
                eq(scriptEnvVars.orgId, orgId),
                eq(scriptEnvVars.scriptName, scriptName),
                inArray(scriptEnvVars.key, keys),
              ),
            );
        }
        return readOverlay(tx, box, orgId, scriptName);
      });
    },
  };
}

export type EnvStore = ReturnType<typeof createEnvStore>;

/** A database or a transaction on it: both run the same queries. */
type Queryable = Pick<Database, "select" | "insert" | "delete">;

/** Every write clears the plaintext column, so that a row from before sealing ends up sealed only. */
async function upsertTenant(
  db: Queryable,
  box: SecretBox,
  orgId: string,
  entries: readonly (readonly [string, string])[],
): Promise<void> {
  for (const chunk of chunks(entries)) {
    await db
      .insert(envVars)
      .values(chunk.map(([key, value]) => ({ orgId, key, sealedValue: sealEnvValue(box, { orgId, key }, value) })))
      .onConflictDoUpdate({
        target: [envVars.orgId, envVars.key],
        set: { sealedValue: sql`excluded.sealed_value`, plaintextValue: null, updatedAt: nowMs },
      });
  }
}

async function upsertOverlay(
  db: Queryable,
  box: SecretBox,
  orgId: string,
  scriptName: string,
  entries: readonly (readonly [string, string])[],
): Promise<void> {
  for (const chunk of chunks(entries)) {
    await db
      .insert(scriptEnvVars)
      .values(
        chunk.map(([key, value]) => ({
          orgId,
          scriptName,
          key,
          sealedValue: sealEnvValue(box, { orgId, scriptName, key }, value),
        })),
      )
      .onConflictDoUpdate({
        target: [scriptEnvVars.orgId, scriptEnvVars.scriptName, scriptEnvVars.key],
        set: { sealedValue: sql`excluded.sealed_value`, plaintextValue: null, updatedAt: nowMs },
      });
  }
}

async function readOverlay(db: Queryable, box: SecretBox, orgId: string, scriptName: string): Promise<EnvEntry[]> {
  const rows = await db
    .select({ key: scriptEnvVars.key, sealedValue: scriptEnvVars.sealedValue })
    .from(scriptEnvVars)
    .where(and(eq(scriptEnvVars.orgId, orgId), eq(scriptEnvVars.scriptName, scriptName)))
    .orderBy(asc(byCodePoint(scriptEnvVars.key)));
  return rows.map(({ key, sealedValue }) => ({
    key,
    value: openEnvValue(box, { orgId, scriptName, key }, sealedValue),
  }));
}

function* chunks<T>(items: readonly T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += ROWS_PER_STATEMENT)
    yield items.slice(start, start + ROWS_PER_STATEMENT);
}
