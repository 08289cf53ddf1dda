import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import { resultRows, type Database } from "../../db/database.js";
import { actionQueue } from "./queue-schema.js";

export type QueueRow = typeof actionQueue.$inferSelect;

/** One dispatch to enqueue: what a worker needs to run it after a restart, prepared already. */
export interface NewQueueEntry {
  readonly runId: string;
  readonly orgId: string;
  readonly bucket: string;
  readonly actionId: string;
  readonly batchId: string;
  readonly reverseTs: string;
  /** The Selection as proto JSON. */
  readonly selection: unknown;
  readonly params: unknown;
  readonly selectionLabel: string;
  readonly enqueuedAt: number;
}

/**
 * An arbitrary constant naming the claim lock among PostgreSQL advisory locks: claims take it for
 * their short transaction, so two processes cannot both see an organization one below its bound
 * and both claim (the count of running rows is not something SKIP LOCKED can protect).
 */
const CLAIM_LOCK = 5_310_447_129;

/**
 * The action queue's rows. Claims hand out the oldest queued row of the organization with the
 * fewest running rows, never more than `perOrganization` running for one organization, so one
 * tenant's bulk of a thousand runs waits its turn behind another tenant's single run. A running
 * row whose lease lapsed counts as free and is claimed again (its thread id kept).
 */
export function createActionQueueStore(db: Database) {
  const owned = (runId: string, owner: string) =>
    and(eq(actionQueue.runId, runId), eq(actionQueue.leaseOwner, owner), eq(actionQueue.status, "running"));

  return {
    /** Enqueues dispatches, all or none (one transaction). */
    async enqueue(entries: readonly NewQueueEntry[]): Promise<void> {
      if (entries.length === 0) return;
      await db.transaction(async (tx) => {
        await tx.insert(actionQueue).values(entries.map((entry) => ({ ...entry, status: "queued" as const })));
      });
    },

    async get(orgId: string, runId: string): Promise<QueueRow | undefined> {
      const [row] = await db
        .select()
        .from(actionQueue)
        .where(and(eq(actionQueue.orgId, orgId), eq(actionQueue.runId, runId)));
      return row;
    },

    /** Queued and running rows of a bucket, oldest first. */
    listActive(orgId: string, bucket: string, limit: number): Promise<QueueRow[]> {
      return db
        .select()
        .from(actionQueue)
        .where(
          and(
            eq(actionQueue.orgId, orgId),
            eq(actionQueue.bucket, bucket),
            inArray(actionQueue.status, ["queued", "running"]),
          ),
        )
        .orderBy(asc(actionQueue.enqueuedAt), asc(actionQueue.runId))
        .limit(limit);
    },

    /**
     * Claims one row for `owner` with a lease, or undefined when nothing is claimable: a queued
     * row, or a running one whose lease lapsed, of an organization below `perOrganization` live
     * running rows; the organization with the fewest running goes first, then the oldest row.
     */
    async claim(owner: string, leaseMs: number, perOrganization: number, now: number): Promise<QueueRow | undefined> {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`);
        const [free] = resultRows<{ run_id: string }>(
          await tx.execute(sql`
            with running as (
              select org_id, count(*) as n from ${actionQueue}
              where status = 'running' and lease_expires_at >= ${now}
              group by org_id
            )
            select q.run_id from ${actionQueue} q
            left join running r on r.org_id = q.org_id
            where (q.status = 'queued' or (q.status = 'running' and q.lease_expires_at < ${now}))
              and coalesce(r.n, 0) < ${perOrganization}
            order by coalesce(r.n, 0), q.enqueued_at, q.run_id
            limit 1
            for update of q skip locked`),
        );
        if (!free) return undefined;
        const [row] = await tx
          .update(actionQueue)
          .set({
            status: "running",
            leaseOwner: owner,
            leaseExpiresAt: now + leaseMs,
            attempts: sql`${actionQueue.attempts} + 1`,
            startedAt: sql`case when ${actionQueue.startedAt} = 0 then ${now} else ${actionQueue.startedAt} end`,
          })
          .where(eq(actionQueue.runId, free.run_id))
          .returning();
        return row;
      });
    },

    /** Extends the lease; false when the row is no longer this owner's (taken over, or ended). */
    async renew(runId: string, owner: string, leaseMs: number, now: number): Promise<boolean> {
      const rows = await db
        .update(actionQueue)
        .set({ leaseExpiresAt: now + leaseMs })
        .where(owned(runId, owner))
        .returning({ runId: actionQueue.runId });
      return rows.length === 1;
    },

    /** Records the run's thread, so that a worker taking over resumes it. */
    async setThread(runId: string, owner: string, threadId: string): Promise<boolean> {
      const rows = await db
        .update(actionQueue)
        .set({ threadId })
        .where(owned(runId, owner))
        .returning({ runId: actionQueue.runId });
      return rows.length === 1;
    },

    /** Marks the run ended; false when another worker holds it now. */
    async finish(runId: string, owner: string, now: number): Promise<boolean> {
      const rows = await db
        .update(actionQueue)
        .set({ status: "done", leaseOwner: "", leaseExpiresAt: 0, finishedAt: now })
        .where(owned(runId, owner))
        .returning({ runId: actionQueue.runId });
      return rows.length === 1;
    },

    /** Gives a running row back (this process is stopping): any worker claims it at once. */
    async release(runId: string, owner: string): Promise<void> {
      await db.update(actionQueue).set({ leaseOwner: "", leaseExpiresAt: 0 }).where(owned(runId, owner));
    },

    /** Deletes rows that ended before `before`; returns how many. */
    async purgeDone(before: number): Promise<number> {
      const rows = await db
        .delete(actionQueue)
        .where(and(eq(actionQueue.status, "done"), lt(actionQueue.finishedAt, before)))
        .returning({ runId: actionQueue.runId });
      return rows.length;
    },
  };
}

export type ActionQueueStore = ReturnType<typeof createActionQueueStore>;
