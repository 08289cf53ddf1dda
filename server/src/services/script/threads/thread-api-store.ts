import { and, count, desc, eq, inArray, like, or } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { threadEvents, threads, threadSteps } from "../script-schema.js";
import { comparePaths, type StepSummaryRow } from "./thread-messages.js";
import { threadHeaderColumns, type EventRow, type StepRow, type ThreadHeader } from "./thread-store.js";

/**
 * Queries of the API side of threads that the engine's thread store does not have: a thread row
 * locked for a status change, step summaries without their data, a step with its subtree, and
 * the tail of the yielded values. Every query filters by org_id.
 */
export function createThreadApiStore(db: Database) {
  return {
    /**
     * The thread, locked until the end of the transaction `db` is (FOR UPDATE): a worker's claim
     * (FOR UPDATE SKIP LOCKED) passes it by meanwhile, and a claim in progress is seen whole.
     */
    async lockThread(orgId: string, id: string): Promise<ThreadHeader | undefined> {
      const [row] = await db
        .select(threadHeaderColumns)
        .from(threads)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id)))
        .for("update");
      return row;
    },

    /** Marks the steps that have not finished (running, waiting, paused) CANCELLED, as of `at`. */
    async cancelUnfinishedSteps(orgId: string, threadId: string, at: number): Promise<void> {
      await db
        .update(threadSteps)
        .set({ status: "cancelled", finishedAt: at })
        .where(
          and(
            eq(threadSteps.orgId, orgId),
            eq(threadSteps.threadId, threadId),
            inArray(threadSteps.status, ["running", "waiting", "paused"]),
          ),
        );
    },

    /** Every recorded step, without its input and output (which can be megabytes), in path order. */
    async stepSummaries(orgId: string, threadId: string): Promise<StepSummaryRow[]> {
      const rows = await db
        .select({
          stepPath: threadSteps.stepPath,
          name: threadSteps.name,
          primitive: threadSteps.primitive,
          status: threadSteps.status,
          startedAt: threadSteps.startedAt,
          finishedAt: threadSteps.finishedAt,
          parentPath: threadSteps.parentPath,
        })
        .from(threadSteps)
        .where(and(eq(threadSteps.orgId, orgId), eq(threadSteps.threadId, threadId)));
      return rows.sort((a, b) => comparePaths(a.stepPath, b.stepPath));
    },

    /** A step and the steps nested under it (paths starting with `<path>.`), in path order. */
    async stepTree(orgId: string, threadId: string, path: string): Promise<StepRow[]> {
      const rows = await db
        .select()
        .from(threadSteps)
        .where(
          and(
            eq(threadSteps.orgId, orgId),
            eq(threadSteps.threadId, threadId),
            or(eq(threadSteps.stepPath, path), like(threadSteps.stepPath, `${path}.%`)),
          ),
        );
      return rows.sort((a, b) => comparePaths(a.stepPath, b.stepPath));
    },

    /** How many values the thread yielded, and the `limit` most recent, oldest first. */
    async yields(orgId: string, threadId: string, limit: number): Promise<{ total: number; recent: EventRow[] }> {
      const where = and(
        eq(threadEvents.orgId, orgId),
        eq(threadEvents.threadId, threadId),
        eq(threadEvents.kind, "yielded"),
      );
      const [counted] = await db.select({ total: count() }).from(threadEvents).where(where);
      const recent =
        limit === 0
          ? []
          : await db.select().from(threadEvents).where(where).orderBy(desc(threadEvents.sequence)).limit(limit);
      return { total: counted?.total ?? 0, recent: recent.reverse() };
    },
  };
}

export type ThreadApiStore = ReturnType<typeof createThreadApiStore>;
