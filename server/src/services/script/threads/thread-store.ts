import { and, asc, desc, eq, gt, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { threadEvents, threads, threadSteps, type ThreadStatus } from "../../../db/schema.js";

export type ThreadRow = typeof threads.$inferSelect;
export type NewThread = typeof threads.$inferInsert;
export type StepRow = typeof threadSteps.$inferSelect;
export type EventRow = typeof threadEvents.$inferSelect;

/** Statuses a worker picks up: new threads, and running ones whose lease ran out. */
const RUNNABLE: ThreadStatus[] = ["pending", "running", "cancelling"];
export const TERMINAL: ReadonlySet<ThreadStatus> = new Set(["completed", "failed", "cancelled"]);

export interface ThreadPage {
  readonly status?: ThreadStatus;
  readonly scriptName?: string;
  /** Position after which to read: the last row of the previous page (newest first). */
  readonly after?: { createdAt: number; id: string };
  readonly limit: number;
}

/** The durable state of threads: rows, steps, events and the work queue over them. */
export function createThreadStore(db: Database) {
  const owned = (id: string, owner: string) => and(eq(threads.id, id), eq(threads.leaseOwner, owner));

  return {
    async insert(thread: NewThread): Promise<ThreadRow> {
      const [row] = await db.insert(threads).values(thread).returning();
      return row!;
    },

    async get(orgId: string, id: string): Promise<ThreadRow | undefined> {
      const [row] = await db.select().from(threads).where(and(eq(threads.orgId, orgId), eq(threads.id, id)));
      return row;
    },

    /** Newest first, by (created_at, id). */
    list(orgId: string, page: ThreadPage): Promise<ThreadRow[]> {
      const after = page.after;
      return db
        .select()
        .from(threads)
        .where(
          and(
            eq(threads.orgId, orgId),
            page.status ? eq(threads.status, page.status) : undefined,
            page.scriptName ? eq(threads.scriptName, page.scriptName) : undefined,
            after ? or(lt(threads.createdAt, after.createdAt), and(eq(threads.createdAt, after.createdAt), lt(threads.id, after.id))) : undefined,
          ),
        )
        .orderBy(desc(threads.createdAt), desc(threads.id))
        .limit(page.limit);
    },

    /**
     * Claims up to `limit` runnable threads for `owner` with a lease: `FOR UPDATE SKIP LOCKED`,
     * so several workers (and several processes on one PostgreSQL) never take the same thread.
     */
    async claim(owner: string, leaseMs: number, limit: number, now: number): Promise<ThreadRow[]> {
      const candidates = db
        .select({ id: threads.id })
        .from(threads)
        .where(
          and(
            // A paused thread is claimable only when its approval has a timeout that has passed.
            or(inArray(threads.status, RUNNABLE), and(eq(threads.status, "paused"), gt(threads.runAfter, 0))),
            lt(threads.leaseExpiresAt, now),
            lte(threads.runAfter, now),
          ),
        )
        .orderBy(asc(threads.createdAt))
        .limit(limit)
        .for("update", { skipLocked: true });
      return db
        .update(threads)
        .set({
          leaseOwner: owner,
          leaseExpiresAt: now + leaseMs,
          status: sql`case when ${threads.status} = 'pending' then 'running' else ${threads.status} end`,
          startedAt: sql`case when ${threads.startedAt} = 0 then ${now} else ${threads.startedAt} end`,
        })
        .where(inArray(threads.id, candidates))
        .returning();
    },

    /** Extends the lease; false when another worker took the thread over (the lease expired). */
    async renew(id: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
      const rows = await db.update(threads).set({ leaseExpiresAt: now + leaseMs }).where(owned(id, owner)).returning({ id: threads.id });
      return rows.length === 1;
    },

    /** Changes a thread this worker owns; false when it no longer owns it. */
    async update(id: string, owner: string, patch: Partial<NewThread>): Promise<boolean> {
      const rows = await db.update(threads).set(patch).where(owned(id, owner)).returning({ id: threads.id });
      return rows.length === 1;
    },

    /** Gives the thread back to the queue (a wait, a pause, the end): no lease, maybe a wake-up time. */
    async release(id: string, owner: string, patch: Partial<NewThread>): Promise<boolean> {
      return this.update(id, owner, { ...patch, leaseOwner: "", leaseExpiresAt: 0 });
    },

    /** Reads whether a cancel was asked for (workers check between steps). */
    async cancelRequested(id: string): Promise<{ requested: boolean; reason: string }> {
      const [row] = await db.select({ requested: threads.cancelRequested, reason: threads.cancelReason }).from(threads).where(eq(threads.id, id));
      return row ?? { requested: false, reason: "" };
    },

    /** Changes a thread regardless of its lease (API operations: cancel, resume), if `status` still holds. */
    async updateIfStatus(orgId: string, id: string, statuses: ThreadStatus[], patch: Partial<NewThread>): Promise<ThreadRow | undefined> {
      const [row] = await db
        .update(threads)
        .set(patch)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id), inArray(threads.status, statuses)))
        .returning();
      return row;
    },

    async steps(threadId: string): Promise<StepRow[]> {
      return db.select().from(threadSteps).where(eq(threadSteps.threadId, threadId)).orderBy(asc(threadSteps.startedAt), asc(threadSteps.stepPath));
    },

    async step(threadId: string, stepPath: string): Promise<StepRow | undefined> {
      const [row] = await db.select().from(threadSteps).where(and(eq(threadSteps.threadId, threadId), eq(threadSteps.stepPath, stepPath)));
      return row;
    },

    /**
     * Records a step, only while `owner` holds the thread's lease: a worker that lost the lease
     * (it stalled, another took over) must not overwrite what the new owner writes. False when
     * the lease is gone.
     */
    async saveStep(step: typeof threadSteps.$inferInsert, owner: string): Promise<boolean> {
      const { threadId, stepPath: _stepPath, orgId: _orgId, ...changes } = step;
      return db.transaction(async (tx) => {
        const [held] = await tx.select({ id: threads.id }).from(threads).where(owned(threadId, owner)).for("update");
        if (!held) return false;
        await tx.insert(threadSteps).values(step).onConflictDoUpdate({ target: [threadSteps.threadId, threadSteps.stepPath], set: changes });
        return true;
      });
    },

    /** Appends one event with the thread's next sequence number, in one transaction. */
    async appendEvent(threadId: string, orgId: string, kind: string, stepPath: string, payload: Record<string, unknown>): Promise<EventRow> {
      return db.transaction(async (tx) => {
        const [counter] = await tx
          .update(threads)
          .set({ eventSequence: sql`${threads.eventSequence} + 1` })
          .where(eq(threads.id, threadId))
          .returning({ sequence: threads.eventSequence });
        const [event] = await tx.insert(threadEvents).values({ threadId, orgId, sequence: counter!.sequence, kind, stepPath, payload }).returning();
        return event!;
      });
    },

    /** The next `yielded` sequence of a thread (monotonic from 1). */
    async nextYieldSequence(threadId: string): Promise<number> {
      const [row] = await db
        .update(threads)
        .set({ yieldSequence: sql`${threads.yieldSequence} + 1` })
        .where(eq(threads.id, threadId))
        .returning({ sequence: threads.yieldSequence });
      return row!.sequence;
    },

    eventsAfter(threadId: string, sequence: number): Promise<EventRow[]> {
      return db.select().from(threadEvents).where(and(eq(threadEvents.threadId, threadId), gt(threadEvents.sequence, sequence))).orderBy(asc(threadEvents.sequence));
    },
  };
}

export type ThreadStore = ReturnType<typeof createThreadStore>;
