import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { ingestSyncRuns, type SyncKindName, type SyncStateName } from "./ingest-schema.js";

export type SyncRunRow = typeof ingestSyncRuns.$inferSelect;

/**
 * Source sync runs (discovery and ingestion), queued by the API and run by any process's ingest
 * worker under a lease, like the jobs: a run whose process died is run again by another.
 */
export function createSyncStore(db: Database, now: () => number = Date.now) {
  return {
    /** Queues a run unless one of the source is queued or running; undefined then. */
    async queue(
      orgId: string,
      run: {
        id: string;
        bucket: string;
        sourceId: string;
        kind: SyncKindName;
        ruleIds?: string[];
        fullResync?: boolean;
      },
    ): Promise<SyncRunRow | undefined> {
      return db.transaction(async (tx) => {
        // Serialises runs of one source: the advisory lock holds until the transaction ends.
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`ingest-sync:${orgId}:${run.sourceId}`}))`);
        const [busy] = await tx
          .select({ id: ingestSyncRuns.id })
          .from(ingestSyncRuns)
          .where(
            and(
              eq(ingestSyncRuns.orgId, orgId),
              eq(ingestSyncRuns.sourceId, run.sourceId),
              inArray(ingestSyncRuns.state, ["queued", "running"]),
            ),
          )
          .limit(1);
        if (busy) return undefined;
        const [row] = await tx
          .insert(ingestSyncRuns)
          .values({ ...run, orgId, state: "queued", ruleIds: run.ruleIds ?? [], fullResync: run.fullResync ?? false })
          .returning();
        return row;
      });
    },

    async latest(orgId: string, bucket: string, sourceId: string, kind: SyncKindName): Promise<SyncRunRow | undefined> {
      const [row] = await db
        .select()
        .from(ingestSyncRuns)
        .where(
          and(
            eq(ingestSyncRuns.orgId, orgId),
            eq(ingestSyncRuns.bucket, bucket),
            eq(ingestSyncRuns.sourceId, sourceId),
            eq(ingestSyncRuns.kind, kind),
          ),
        )
        .orderBy(desc(ingestSyncRuns.createdAt), desc(ingestSyncRuns.id))
        .limit(1);
      return row;
    },

    async claim(owner: string, leaseMs: number): Promise<SyncRunRow | undefined> {
      return db.transaction(async (tx) => {
        const [free] = await tx
          .select({ id: ingestSyncRuns.id })
          .from(ingestSyncRuns)
          .where(and(inArray(ingestSyncRuns.state, ["queued", "running"]), lt(ingestSyncRuns.leaseExpiresAt, now())))
          .orderBy(asc(ingestSyncRuns.createdAt))
          .limit(1)
          .for("update", { skipLocked: true });
        if (!free) return undefined;
        const [row] = await tx
          .update(ingestSyncRuns)
          .set({ state: "running", leaseOwner: owner, leaseExpiresAt: now() + leaseMs })
          .where(eq(ingestSyncRuns.id, free.id))
          .returning();
        return row;
      });
    },

    async progress(
      id: string,
      owner: string,
      change: { objectsDiscovered?: number; jobsStarted?: number },
      leaseMs: number,
    ) {
      await db
        .update(ingestSyncRuns)
        .set({ ...change, leaseExpiresAt: now() + leaseMs })
        .where(and(eq(ingestSyncRuns.id, id), eq(ingestSyncRuns.leaseOwner, owner)));
    },

    async finish(id: string, owner: string, state: Extract<SyncStateName, "succeeded" | "failed">, errorMessage = "") {
      await db
        .update(ingestSyncRuns)
        .set({
          state,
          errorMessage,
          finishedAt: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`,
          leaseOwner: "",
          leaseExpiresAt: 0,
        })
        .where(and(eq(ingestSyncRuns.id, id), eq(ingestSyncRuns.leaseOwner, owner)));
    },
  };
}

export type SyncStore = ReturnType<typeof createSyncStore>;
