import { and, asc, count, desc, eq, getTableColumns, gt, inArray, lt, lte, or, sql } from "drizzle-orm";
import { resultRows, type Database } from "../../../db/database.js";
import { toStoredJson } from "../../../db/stored-json.js";
import { threadEvents, threads, threadSteps, type ThreadStatus } from "../script-schema.js";
import { enqueueThreadCallback } from "../callbacks/callback-outbox.js";
import type { ThreadEventRecord } from "./thread-events.js";

export type ThreadRow = typeof threads.$inferSelect;
/** A thread without its input and output, which can be tens of megabytes: what the API reads but for results. */
export type ThreadHeader = Omit<ThreadRow, "input" | "output">;
export type NewThread = typeof threads.$inferInsert;
export type StepRow = typeof threadSteps.$inferSelect;
export type EventRow = typeof threadEvents.$inferSelect;

const ofSteps = (orgId: string, threadId: string) =>
  and(eq(threadSteps.orgId, orgId), eq(threadSteps.threadId, threadId));

const { input: _input, output: _output, ...headerColumns } = getTableColumns(threads);
/** The columns of a ThreadHeader, for queries of the API side. */
export const threadHeaderColumns = headerColumns;

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

/**
 * The durable state of threads: rows, steps, events and the work queue over them. Every read of
 * a thread's rows names its organization, so that tenancy never rests on a caller having checked
 * the thread first; the worker's writes go through its lease (`owner` is its own random id).
 */
export function createThreadStore(db: Database) {
  const owned = (id: string, owner: string) => and(eq(threads.id, id), eq(threads.leaseOwner, owner));
  const ofThread = (orgId: string, id: string) => and(eq(threads.orgId, orgId), eq(threads.id, id));

  return {
    async insert(thread: NewThread): Promise<ThreadRow> {
      const [row] = await db.insert(threads).values(thread).returning();
      return row!;
    },

    async get(orgId: string, id: string): Promise<ThreadRow | undefined> {
      const [row] = await db
        .select()
        .from(threads)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id)));
      return row;
    },

    async getHeader(orgId: string, id: string): Promise<ThreadHeader | undefined> {
      const [row] = await db
        .select(headerColumns)
        .from(threads)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id)));
      return row;
    },

    /** The thread's final output; null until it completes (and for a thread that does not exist). */
    async output(orgId: string, id: string): Promise<unknown> {
      const [row] = await db
        .select({ output: threads.output })
        .from(threads)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id)));
      return row?.output ?? null;
    },

    /** Newest first, by (created_at, id). */
    list(orgId: string, page: ThreadPage): Promise<ThreadHeader[]> {
      const after = page.after;
      return db
        .select(headerColumns)
        .from(threads)
        .where(
          and(
            eq(threads.orgId, orgId),
            page.status ? eq(threads.status, page.status) : undefined,
            page.scriptName ? eq(threads.scriptName, page.scriptName) : undefined,
            after
              ? or(
                  lt(threads.createdAt, after.createdAt),
                  and(eq(threads.createdAt, after.createdAt), lt(threads.id, after.id)),
                )
              : undefined,
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

    /**
     * Extends the lease: "lost" when another worker took the thread over (the lease expired),
     * "cancel" when a cancel was asked for meanwhile (the safety net behind the cancel signal).
     */
    async renew(id: string, owner: string, leaseMs: number, now: number): Promise<"held" | "cancel" | "lost"> {
      const [row] = await db
        .update(threads)
        .set({ leaseExpiresAt: now + leaseMs })
        .where(owned(id, owner))
        .returning({ cancel: threads.cancelRequested });
      return !row ? "lost" : row.cancel ? "cancel" : "held";
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

    /** Reads whether a cancel was asked for, and at which step the thread is. */
    async cancelRequested(
      orgId: string,
      id: string,
    ): Promise<{ requested: boolean; reason: string; currentStepPath: string }> {
      const [row] = await db
        .select({
          requested: threads.cancelRequested,
          reason: threads.cancelReason,
          currentStepPath: threads.currentStepPath,
        })
        .from(threads)
        .where(ofThread(orgId, id));
      return row ?? { requested: false, reason: "", currentStepPath: "" };
    },

    /** Changes a thread regardless of its lease (API operations: cancel, resume), if `status` still holds. */
    async updateIfStatus(
      orgId: string,
      id: string,
      statuses: ThreadStatus[],
      patch: Partial<NewThread>,
    ): Promise<ThreadRow | undefined> {
      const [row] = await db
        .update(threads)
        .set(patch)
        .where(and(eq(threads.orgId, orgId), eq(threads.id, id), inArray(threads.status, statuses)))
        .returning();
      return row;
    },

    async steps(orgId: string, threadId: string): Promise<StepRow[]> {
      return db
        .select()
        .from(threadSteps)
        .where(ofSteps(orgId, threadId))
        .orderBy(asc(threadSteps.startedAt), asc(threadSteps.stepPath));
    },

    /** How many of the thread's steps completed (ThreadCompleted `steps_executed`), without reading their data. */
    async completedStepCount(orgId: string, threadId: string): Promise<number> {
      const [row] = await db
        .select({ total: count() })
        .from(threadSteps)
        .where(and(ofSteps(orgId, threadId), eq(threadSteps.status, "completed")));
      return row?.total ?? 0;
    },

    async step(orgId: string, threadId: string, stepPath: string): Promise<StepRow | undefined> {
      const [row] = await db
        .select()
        .from(threadSteps)
        .where(and(ofSteps(orgId, threadId), eq(threadSteps.stepPath, stepPath)));
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
        const [held] = await tx
          .select({ id: threads.id })
          .from(threads)
          .where(and(owned(threadId, owner), eq(threads.orgId, step.orgId)))
          .for("update");
        if (!held) return false;
        await tx
          .insert(threadSteps)
          .values(step)
          .onConflictDoUpdate({ target: [threadSteps.threadId, threadSteps.stepPath], set: changes });
        return true;
      });
    },

    /**
     * The hot path of the engine, one round trip per step start: unless a cancel was asked for,
     * while `owner` holds the lease, moves the thread to the step, writes the step row as running
     * and appends its `stepStarted` event. "cancelled" when a cancel is pending (nothing is
     * written), "lost" when the lease is gone.
     */
    async beginStep(owner: string, step: StepWrite, event: EventWrite): Promise<"started" | "cancelled" | "lost"> {
      const result = await db.execute(sql`
        with t as (
          update threads set current_step_path = ${step.stepPath}, current_step_name = ${step.name}, event_sequence = event_sequence + 1
          where id = ${step.threadId} and org_id = ${step.orgId} and lease_owner = ${owner} and not cancel_requested
          returning id, org_id, event_sequence
        ), s as (
          insert into thread_steps (thread_id, step_path, org_id, step_id, name, primitive, tool, parent_path, status, input, error, attempt, started_at, finished_at)
          select t.id, ${step.stepPath}, t.org_id, ${step.stepId}, ${step.name}, ${step.primitive}, ${step.tool}, ${step.parentPath}, 'running', ${jsonParam(step.input)}, '', 1, ${step.startedAt}, 0 from t
          on conflict (thread_id, step_path) do update set status = 'running', input = coalesce(excluded.input, thread_steps.input), error = '',
            attempt = 1, wake_at = 0, finished_at = 0
        ), e as (
          insert into thread_events (thread_id, sequence, org_id, kind, step_path, payload, created_at)
          select t.id, t.event_sequence, t.org_id, ${event.kind}, ${event.stepPath}, ${jsonParam(event.payload)}, ${event.at} from t
        )
        select count(*)::int as started from t`);
      if (resultRows<{ started: number }>(result)[0]?.started === 1) return "started";
      const [row] = await db
        .select({ owner: threads.leaseOwner, cancel: threads.cancelRequested })
        .from(threads)
        .where(ofThread(step.orgId, step.threadId));
      return row?.owner === owner && row.cancel ? "cancelled" : "lost";
    },

    /**
     * One round trip per step end, while `owner` holds the lease: the step's final status and
     * output, and its event. False when the lease is gone.
     */
    async finishStep(owner: string, step: StepEnd, event: EventWrite): Promise<boolean> {
      const result = await db.execute(sql`
        with t as (
          update threads set event_sequence = event_sequence + 1
          where id = ${step.threadId} and org_id = ${step.orgId} and lease_owner = ${owner}
          returning id, org_id, event_sequence
        ), s as (
          update thread_steps set status = ${step.status}, output = ${jsonParam(step.output)}, error = ${step.error}, finished_at = ${step.finishedAt}
          where thread_id = ${step.threadId} and step_path = ${step.stepPath} and exists (select 1 from t)
        ), e as (
          insert into thread_events (thread_id, sequence, org_id, kind, step_path, payload, created_at)
          select t.id, t.event_sequence, t.org_id, ${event.kind}, ${event.stepPath}, ${jsonParam(event.payload)}, ${event.at} from t
        )
        select count(*)::int as finished from t`);
      return resultRows<{ finished: number }>(result)[0]?.finished === 1;
    },

    /**
     * Ends a run (completed, failed, cancelled), appends its event and queues its callback in one
     * transaction, so a reader never sees the final status without the final event and a thread
     * never ends without its callback queued. False without the lease.
     */
    async endRun(id: string, owner: string, patch: Partial<NewThread>, event: EventWrite): Promise<boolean> {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .update(threads)
          .set({ ...patch, leaseOwner: "", leaseExpiresAt: 0, eventSequence: sql`${threads.eventSequence} + 1` })
          .where(owned(id, owner))
          .returning({ orgId: threads.orgId, sequence: threads.eventSequence });
        if (!row) return false;
        await tx.insert(threadEvents).values({
          threadId: id,
          orgId: row.orgId,
          sequence: row.sequence,
          kind: event.kind,
          stepPath: event.stepPath,
          payload: event.payload,
          createdAt: event.at,
        });
        // A cancel can stop steps mid-way: they end cancelled with the thread, not left running.
        if (patch.status === "cancelled") {
          await tx
            .update(threadSteps)
            .set({ status: "cancelled", finishedAt: event.at })
            .where(and(eq(threadSteps.threadId, id), inArray(threadSteps.status, ["running", "waiting", "paused"])));
        }
        await enqueueThreadCallback(tx, id);
        return true;
      });
    },

    /** Appends one event with the thread's next sequence number, in one transaction. */
    async appendEvent(orgId: string, threadId: string, event: ThreadEventRecord): Promise<EventRow> {
      return db.transaction(async (tx) => {
        const [counter] = await tx
          .update(threads)
          .set({ eventSequence: sql`${threads.eventSequence} + 1` })
          .where(ofThread(orgId, threadId))
          .returning({ sequence: threads.eventSequence });
        if (!counter) throw new Error(`no thread ${threadId} in organization ${orgId}`);
        const [row] = await tx
          .insert(threadEvents)
          .values({ threadId, orgId, sequence: counter.sequence, ...event })
          .returning();
        return row!;
      });
    },

    /** The next `yielded` sequence of a thread (monotonic from 1). */
    async nextYieldSequence(orgId: string, threadId: string): Promise<number> {
      const [row] = await db
        .update(threads)
        .set({ yieldSequence: sql`${threads.yieldSequence} + 1` })
        .where(ofThread(orgId, threadId))
        .returning({ sequence: threads.yieldSequence });
      if (!row) throw new Error(`no thread ${threadId} in organization ${orgId}`);
      return row.sequence;
    },

    eventsAfter(orgId: string, threadId: string, sequence: number): Promise<EventRow[]> {
      return db
        .select()
        .from(threadEvents)
        .where(
          and(eq(threadEvents.orgId, orgId), eq(threadEvents.threadId, threadId), gt(threadEvents.sequence, sequence)),
        )
        .orderBy(asc(threadEvents.sequence));
    },
  };
}

export type ThreadStore = ReturnType<typeof createThreadStore>;

/** The fields of a step row the engine writes when a step starts. */
export interface StepWrite {
  readonly orgId: string;
  readonly threadId: string;
  readonly stepPath: string;
  readonly stepId: string;
  readonly name: string;
  readonly primitive: string;
  readonly tool: string;
  readonly parentPath: string;
  readonly input: unknown;
  readonly startedAt: number;
}

/** What the engine writes when a step ends. */
export interface StepEnd {
  readonly orgId: string;
  readonly threadId: string;
  readonly stepPath: string;
  readonly status: StepRow["status"];
  readonly output: unknown;
  readonly error: string;
  readonly finishedAt: number;
}

/** An event and the time it happened, epoch ms, as the engine writes it with a step or a run's end. */
export interface EventWrite extends ThreadEventRecord {
  readonly at: number;
}

/**
 * A jsonb parameter of the raw statements, encoded as the schema's storedJson columns are (a
 * value holding NUL is stored escaped); null stays SQL null. Both drivers take it as text and cast.
 */
function jsonParam(value: unknown) {
  return value === undefined || value === null ? sql`null` : sql`${toStoredJson(value)}::jsonb`;
}
