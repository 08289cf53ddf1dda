import { and, asc, eq, gt, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { scripts, scriptVersions } from "./script-schema.js";

export type ScriptRow = typeof scripts.$inferSelect;
export type ScriptVersionRow = typeof scriptVersions.$inferSelect;

/** What publishing derives from a validated source. */
export interface ScriptPublication {
  readonly name: string;
  readonly source: string;
  readonly sourceSha256: string;
  readonly description: string;
  readonly contract: ScriptVersionRow["contract"];
  readonly toolsRequired: readonly string[];
}

export interface ScriptStore {
  /**
   * Publishes the next version and makes it active, in one transaction; the same source as the
   * latest version publishes nothing. `alsoInTransaction` runs in the same transaction (the
   * environment seed), so a failure there publishes nothing either.
   */
  publish(
    orgId: string,
    publication: ScriptPublication,
    alsoInTransaction?: (tx: Database) => Promise<void>,
  ): Promise<{ script: ScriptRow; published: boolean }>;
  get(orgId: string, name: string): Promise<ScriptRow | undefined>;
  /** One version; 0 means the active one. */
  getVersion(orgId: string, name: string, version: number): Promise<ScriptVersionRow | undefined>;
  /** Scripts by name after `afterName`, at most `limit`. */
  list(orgId: string, afterName: string, limit: number): Promise<ScriptRow[]>;
  /** Makes `version` active; undefined when the script or the version does not exist. */
  activate(orgId: string, name: string, version: number): Promise<ScriptRow | undefined>;
}

export function createScriptStore(db: Database): ScriptStore {
  const scriptKey = (orgId: string, name: string) => and(eq(scripts.orgId, orgId), eq(scripts.name, name));
  const versionKey = (orgId: string, name: string, version: number) =>
    and(eq(scriptVersions.orgId, orgId), eq(scriptVersions.scriptName, name), eq(scriptVersions.version, version));

  return {
    publish(orgId, publication, alsoInTransaction) {
      return db.transaction(async (tx) => {
        // A first publication inserts the row; a concurrent one waits on the key, then finds it.
        await tx
          .insert(scripts)
          .values({ orgId, name: publication.name, activeVersion: 0, latestVersion: 0 })
          .onConflictDoNothing();
        const [current] = await tx.select().from(scripts).where(scriptKey(orgId, publication.name)).for("update");
        if (!current) throw new Error(`script ${publication.name} vanished inside its own transaction`);
        if (current.latestVersion > 0) {
          const [latest] = await tx
            .select()
            .from(scriptVersions)
            .where(versionKey(orgId, publication.name, current.latestVersion));
          if (latest?.sourceSha256 === publication.sourceSha256) {
            await alsoInTransaction?.(tx as unknown as Database);
            return { script: current, published: false };
          }
        }
        const version = current.latestVersion + 1;
        await tx.insert(scriptVersions).values({
          orgId,
          scriptName: publication.name,
          version,
          source: publication.source,
          sourceSha256: publication.sourceSha256,
          description: publication.description,
          contract: publication.contract,
          toolsRequired: [...publication.toolsRequired],
        });
        const [script] = await tx
          .update(scripts)
          .set({
            activeVersion: version,
            latestVersion: version,
            updatedAt: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`,
          })
          .where(scriptKey(orgId, publication.name))
          .returning();
        await alsoInTransaction?.(tx as unknown as Database);
        return { script: script!, published: true };
      });
    },

    async get(orgId, name) {
      const [row] = await db.select().from(scripts).where(scriptKey(orgId, name));
      return row && row.latestVersion > 0 ? row : undefined;
    },

    async getVersion(orgId, name, version) {
      let wanted = version;
      if (wanted === 0) {
        const script = await this.get(orgId, name);
        if (!script) return undefined;
        wanted = script.activeVersion;
      }
      const [row] = await db
        .select()
        .from(scriptVersions)
        .where(versionKey(orgId, name, wanted));
      return row;
    },

    list(orgId, afterName, limit) {
      return db
        .select()
        .from(scripts)
        .where(
          and(
            eq(scripts.orgId, orgId),
            gt(scripts.latestVersion, 0),
            afterName === "" ? undefined : gt(sql`${scripts.name} collate "C"`, afterName),
          ),
        )
        .orderBy(asc(sql`${scripts.name} collate "C"`))
        .limit(limit);
    },

    async activate(orgId, name, version) {
      const [exists] = await db
        .select({ version: scriptVersions.version })
        .from(scriptVersions)
        .where(versionKey(orgId, name, version));
      if (!exists) return undefined;
      const [row] = await db
        .update(scripts)
        .set({ activeVersion: version, updatedAt: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint` })
        .where(scriptKey(orgId, name))
        .returning();
      return row;
    },
  };
}
