import { and, asc, eq, inArray, lt, ne, or } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { vectorDatabases, vectorEngines, type DatabaseRow, type EngineRow } from "./vector-schema.js";

export type EngineInsert = typeof vectorEngines.$inferInsert;
export type EngineChanges = Partial<Omit<EngineInsert, "id" | "orgId" | "bucket" | "createdAt">>;

/** Queries on the engine and database tables, each scoped to an organization. Pass a transaction to join one. */
export function engineStore(db: Database, now: () => number = Date.now) {
  const engineOf = (orgId: string, bucket: string) =>
    and(eq(vectorEngines.orgId, orgId), eq(vectorEngines.bucket, bucket));

  return {
    async get(orgId: string, bucket: string): Promise<EngineRow | undefined> {
      const [row] = await db.select().from(vectorEngines).where(engineOf(orgId, bucket));
      return row;
    },

    async getForUpdate(orgId: string, bucket: string): Promise<EngineRow | undefined> {
      const [row] = await db.select().from(vectorEngines).where(engineOf(orgId, bucket)).for("update");
      return row;
    },

    async byId(id: string): Promise<EngineRow | undefined> {
      const [row] = await db.select().from(vectorEngines).where(eq(vectorEngines.id, id));
      return row;
    },

    /** Inserts an engine; undefined when the bucket already has one (a concurrent first use). */
    async insert(row: EngineInsert): Promise<EngineRow | undefined> {
      const [inserted] = await db.insert(vectorEngines).values(row).onConflictDoNothing().returning();
      return inserted;
    },

    async update(id: string, changes: EngineChanges): Promise<EngineRow | undefined> {
      const [row] = await db
        .update(vectorEngines)
        .set({ ...changes, updatedAt: now() })
        .where(eq(vectorEngines.id, id))
        .returning();
      return row;
    },

    async remove(id: string): Promise<void> {
      await db.delete(vectorEngines).where(eq(vectorEngines.id, id));
    },

    async database(orgId: string, id: string): Promise<DatabaseRow | undefined> {
      const [row] = await db
        .select()
        .from(vectorDatabases)
        .where(and(eq(vectorDatabases.orgId, orgId), eq(vectorDatabases.id, id)));
      return row;
    },

    async insertDatabase(row: typeof vectorDatabases.$inferInsert): Promise<DatabaseRow> {
      const [inserted] = await db.insert(vectorDatabases).values(row).returning();
      return inserted as DatabaseRow;
    },

    async setDatabaseStatus(id: string, status: DatabaseRow["status"]): Promise<void> {
      await db.update(vectorDatabases).set({ status }).where(eq(vectorDatabases.id, id));
    },

    async removeDatabase(id: string): Promise<void> {
      await db.delete(vectorDatabases).where(eq(vectorDatabases.id, id));
    },

    async databases(orgId: string): Promise<DatabaseRow[]> {
      return db
        .select()
        .from(vectorDatabases)
        .where(eq(vectorDatabases.orgId, orgId))
        .orderBy(asc(vectorDatabases.createdAt), asc(vectorDatabases.id));
    },

    /** Buckets of other engines attached to a database (pick mode), which a drop would break. */
    async otherUsers(databaseId: string, engineId: string): Promise<string[]> {
      const rows = await db
        .select({ bucket: vectorEngines.bucket })
        .from(vectorEngines)
        .where(and(eq(vectorEngines.databaseId, databaseId), ne(vectorEngines.id, engineId)));
      return rows.map((row) => row.bucket);
    },

    /**
     * Leases an auto engine still provisioning (one nobody holds, or whose lease lapsed, as after a
     * crash) to `owner`; `engineId` limits the claim to one engine (provisioning on first use).
     */
    async claim(owner: string, leaseMs: number, engineId?: string): Promise<EngineRow | undefined> {
      const [free] = await db
        .select({ id: vectorEngines.id })
        .from(vectorEngines)
        .where(
          and(
            inArray(vectorEngines.status, ["PENDING", "PROVISIONING"]),
            or(lt(vectorEngines.leaseExpiresAt, now()), eq(vectorEngines.leaseOwner, owner)),
            engineId === undefined ? undefined : eq(vectorEngines.id, engineId),
          ),
        )
        .orderBy(asc(vectorEngines.leaseExpiresAt))
        .limit(1)
        .for("update", { skipLocked: true });
      if (!free) return undefined;
      const [row] = await db
        .update(vectorEngines)
        .set({ leaseOwner: owner, leaseExpiresAt: now() + leaseMs })
        .where(eq(vectorEngines.id, free.id))
        .returning();
      return row;
    },
  };
}

export type EngineStore = ReturnType<typeof engineStore>;
