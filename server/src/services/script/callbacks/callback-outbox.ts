import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import { resultRows, type Database } from "../../../db/database.js";
import { threadCallbacks } from "../script-schema.js";

export type CallbackRow = typeof threadCallbacks.$inferSelect;

/**
 * Queues the callback of a thread that just ended, when it has a `callback_url`. Called inside the
 * transaction that writes the terminal status, so a thread never ends without its delivery queued
 * and a rolled-back end queues nothing.
 */
export async function enqueueThreadCallback(tx: Database, threadId: string): Promise<boolean> {
  const rows = await tx.execute(sql`
    insert into thread_callbacks (thread_id, org_id, url)
    select id, org_id, callback_url from threads where id = ${threadId} and callback_url <> ''
    returning id`);
  return resultRows(rows).length > 0;
}

/** The queue of callback deliveries: claims for a deliverer, and what each attempt ended with. */
export function createCallbackOutbox(db: Database) {
  return {
    /**
     * Claims up to `limit` due deliveries for `leaseMs` (FOR UPDATE SKIP LOCKED), so several
     * processes never post the same attempt; a process that dies mid-attempt leaves a claim that
     * simply expires.
     */
    async claim(now: number, leaseMs: number, limit: number): Promise<CallbackRow[]> {
      const due = db
        .select({ id: threadCallbacks.id })
        .from(threadCallbacks)
        .where(
          and(
            eq(threadCallbacks.status, "pending"),
            lte(threadCallbacks.nextAttemptAt, now),
            lte(threadCallbacks.leaseExpiresAt, now),
          ),
        )
        .orderBy(asc(threadCallbacks.nextAttemptAt))
        .limit(limit)
        .for("update", { skipLocked: true });
      return db
        .update(threadCallbacks)
        .set({ leaseExpiresAt: now + leaseMs, attempts: sql`${threadCallbacks.attempts} + 1` })
        .where(inArray(threadCallbacks.id, due))
        .returning();
    },

    /** Fixes the body at the first attempt: every retry then sends the same bytes. */
    async saveBody(id: string, body: string): Promise<void> {
      await db.update(threadCallbacks).set({ body }).where(eq(threadCallbacks.id, id));
    },

    async delivered(id: string, at: number, statusCode: number): Promise<void> {
      await db
        .update(threadCallbacks)
        .set({ status: "delivered", deliveredAt: at, lastStatusCode: statusCode, lastError: "", leaseExpiresAt: 0 })
        .where(eq(threadCallbacks.id, id));
    },

    /** Records a failed attempt: retried at `nextAttemptAt`, or given up when that is undefined. */
    async attemptFailed(
      id: string,
      outcome: { error: string; statusCode: number; nextAttemptAt: number | undefined },
    ): Promise<void> {
      await db
        .update(threadCallbacks)
        .set({
          status: outcome.nextAttemptAt === undefined ? "failed" : "pending",
          nextAttemptAt: outcome.nextAttemptAt ?? 0,
          lastError: outcome.error.slice(0, 1000),
          lastStatusCode: outcome.statusCode,
          leaseExpiresAt: 0,
        })
        .where(eq(threadCallbacks.id, id));
    },

    /** A thread's deliveries, oldest first. */
    ofThread(threadId: string): Promise<CallbackRow[]> {
      return db
        .select()
        .from(threadCallbacks)
        .where(eq(threadCallbacks.threadId, threadId))
        .orderBy(asc(threadCallbacks.createdAt));
    },
  };
}

export type CallbackOutbox = ReturnType<typeof createCallbackOutbox>;
