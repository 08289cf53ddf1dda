import { and, asc, desc, eq, inArray, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import {
  ingestJobObjects,
  ingestJobs,
  ingestObjectStates,
  type JobObjectChange,
  type JobSelection,
  type JobStatusName,
} from "./ingest-schema.js";

export type JobRow = typeof ingestJobs.$inferSelect;
export type JobObjectRow = typeof ingestJobObjects.$inferSelect;

export interface NewJob {
  readonly id: string;
  readonly bucket: string;
  readonly ruleId: string;
  readonly pipelineId: string;
  readonly sourceId: string;
  readonly selection: JobSelection;
  /** Objects known when the job is made (events, explicit keys); the worker lists the others. */
  readonly objects?: readonly { key: string; change: JobObjectChange }[];
}

const epochNow = sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`;

/**
 * Ingest jobs and their objects. A job is QUEUED until a worker claims it (a lease, renewed while
 * it works and taken over when it lapses), RUNNING while its objects are processed one by one, each
 * object's outcome committed on its own, and ends SUCCEEDED, PARTIALLY_FAILED or FAILED.
 */
export function createJobStore(db: Database, now: () => number = Date.now) {
  const jobOf = (orgId: string, bucket: string, jobId: string) =>
    and(eq(ingestJobs.orgId, orgId), eq(ingestJobs.bucket, bucket), eq(ingestJobs.id, jobId));

  async function insertObjects(executor: Database, jobId: string, objects: NewJob["objects"]): Promise<void> {
    if (!objects || objects.length === 0) return;
    await executor
      .insert(ingestJobObjects)
      .values(objects.map((o) => ({ jobId, key: o.key, change: o.change })))
      .onConflictDoUpdate({
        target: [ingestJobObjects.jobId, ingestJobObjects.key],
        set: { change: sql`excluded.change`, status: "pending" },
      });
  }

  const store = {
    async create(orgId: string, job: NewJob): Promise<JobRow> {
      return db.transaction(async (tx) => {
        const listed = job.objects !== undefined;
        const [row] = await tx
          .insert(ingestJobs)
          .values({
            id: job.id,
            orgId,
            bucket: job.bucket,
            ruleId: job.ruleId,
            pipelineId: job.pipelineId,
            sourceId: job.sourceId,
            status: "queued",
            selection: job.selection,
            listed,
            objectsTotal: job.objects?.length ?? 0,
          })
          .returning();
        await insertObjects(tx, job.id, job.objects);
        return row!;
      });
    },

    /**
     * Adds object changes to the rule's queued, not yet claimed, event job, if there is one: a burst
     * of writes becomes one job rather than one per object. Undefined when there is none to join.
     */
    async joinQueued(
      orgId: string,
      ruleId: string,
      objects: readonly { key: string; change: JobObjectChange }[],
    ): Promise<JobRow | undefined> {
      return db.transaction(async (tx) => {
        const [open] = await tx
          .select()
          .from(ingestJobs)
          .where(
            and(
              eq(ingestJobs.orgId, orgId),
              eq(ingestJobs.ruleId, ruleId),
              eq(ingestJobs.status, "queued"),
              eq(ingestJobs.listed, true),
              eq(ingestJobs.leaseOwner, ""),
              eq(ingestJobs.attempt, 1),
            ),
          )
          .limit(1)
          .for("update", { skipLocked: true });
        if (!open) return undefined;
        await insertObjects(tx, open.id, objects);
        const [row] = await tx
          .update(ingestJobs)
          .set({
            objectsTotal: sql`(select count(*) from ${ingestJobObjects} where ${ingestJobObjects.jobId} = ${open.id})`,
          })
          .where(eq(ingestJobs.id, open.id))
          .returning();
        return row;
      });
    },

    async get(orgId: string, bucket: string, jobId: string): Promise<JobRow | undefined> {
      const [row] = await db
        .select()
        .from(ingestJobs)
        .where(jobOf(orgId, bucket, jobId));
      return row;
    },

    /** Jobs of a bucket, newest first, after the (createdAt, id) cursor. */
    async list(
      orgId: string,
      bucket: string,
      filter: {
        pipelineId?: string;
        ruleId?: string;
        status?: JobStatusName;
        after?: { createdAt: number; id: string };
        limit: number;
      },
    ): Promise<JobRow[]> {
      return db
        .select()
        .from(ingestJobs)
        .where(
          and(
            eq(ingestJobs.orgId, orgId),
            eq(ingestJobs.bucket, bucket),
            filter.pipelineId ? eq(ingestJobs.pipelineId, filter.pipelineId) : undefined,
            filter.ruleId ? eq(ingestJobs.ruleId, filter.ruleId) : undefined,
            filter.status ? eq(ingestJobs.status, filter.status) : undefined,
            filter.after
              ? or(
                  lt(ingestJobs.createdAt, filter.after.createdAt),
                  and(eq(ingestJobs.createdAt, filter.after.createdAt), lt(ingestJobs.id, filter.after.id)),
                )
              : undefined,
          ),
        )
        .orderBy(desc(ingestJobs.createdAt), desc(ingestJobs.id))
        .limit(filter.limit);
    },

    /** A queued or running job nobody holds (or whose holder's lease lapsed), leased to `owner`. */
    async claim(owner: string, leaseMs: number): Promise<JobRow | undefined> {
      return db.transaction(async (tx) => {
        const [free] = await tx
          .select({ id: ingestJobs.id })
          .from(ingestJobs)
          .where(and(inArray(ingestJobs.status, ["queued", "running"]), lt(ingestJobs.leaseExpiresAt, now())))
          .orderBy(asc(ingestJobs.createdAt))
          .limit(1)
          .for("update", { skipLocked: true });
        if (!free) return undefined;
        const [job] = await tx
          .update(ingestJobs)
          .set({
            leaseOwner: owner,
            leaseExpiresAt: now() + leaseMs,
            status: "running",
            startedAt: sql`case when ${ingestJobs.startedAt} = 0 then ${epochNow} else ${ingestJobs.startedAt} end`,
          })
          .where(eq(ingestJobs.id, free.id))
          .returning();
        return job;
      });
    },

    /** Extends the lease; false when another owner took the job (this process then stops working on it). */
    async renew(jobId: string, owner: string, leaseMs: number): Promise<boolean> {
      const rows = await db
        .update(ingestJobs)
        .set({ leaseExpiresAt: now() + leaseMs })
        .where(and(eq(ingestJobs.id, jobId), eq(ingestJobs.leaseOwner, owner)))
        .returning({ id: ingestJobs.id });
      return rows.length > 0;
    },

    /** Gives a job back (at shutdown) so that another process takes it at once. */
    async release(jobId: string, owner: string): Promise<void> {
      await db
        .update(ingestJobs)
        .set({ leaseOwner: "", leaseExpiresAt: 0 })
        .where(and(eq(ingestJobs.id, jobId), eq(ingestJobs.leaseOwner, owner)));
    },

    /** Writes the objects a listing found and marks the job listed. */
    async setListed(jobId: string, objects: readonly { key: string; change: JobObjectChange }[]): Promise<void> {
      await db.transaction(async (tx) => {
        await insertObjects(tx, jobId, objects);
        await tx.update(ingestJobs).set({ listed: true, objectsTotal: objects.length }).where(eq(ingestJobs.id, jobId));
      });
    },

    async pendingObjects(jobId: string, limit: number): Promise<JobObjectRow[]> {
      return db
        .select()
        .from(ingestJobObjects)
        .where(and(eq(ingestJobObjects.jobId, jobId), eq(ingestJobObjects.status, "pending")))
        .orderBy(asc(ingestJobObjects.key))
        .limit(limit);
    },

    async failedObjects(jobId: string, limit: number): Promise<JobObjectRow[]> {
      return db
        .select()
        .from(ingestJobObjects)
        .where(and(eq(ingestJobObjects.jobId, jobId), eq(ingestJobObjects.status, "failed")))
        .orderBy(asc(ingestJobObjects.key))
        .limit(limit);
    },

    /** Records the thread started for an object, so that a job taken over waits for it rather than start another. */
    async startObject(jobId: string, key: string, threadId: string, etag: string): Promise<void> {
      await db
        .update(ingestJobObjects)
        .set({ threadId, etag })
        .where(and(eq(ingestJobObjects.jobId, jobId), eq(ingestJobObjects.key, key)));
    },

    /** Counts a failed run of an object that will run again. */
    async retryObject(jobId: string, key: string): Promise<void> {
      await db
        .update(ingestJobObjects)
        .set({ threadId: "", tries: sql`${ingestJobObjects.tries} + 1` })
        .where(and(eq(ingestJobObjects.jobId, jobId), eq(ingestJobObjects.key, key)));
    },

    /**
     * Commits one object's outcome with the job's counters and, on success, the pipeline's record of
     * what it ingested (or, for a deletion, the record removed): one transaction, so a crash repeats
     * the object at most, and a repeat replaces chunks rather than adding them.
     */
    async finishObject(
      job: JobRow,
      key: string,
      outcome:
        | { status: "succeeded"; change: JobObjectChange; etag: string; chunks: number }
        | { status: "skipped" }
        | { status: "failed"; error: string },
    ): Promise<void> {
      await db.transaction(async (tx) => {
        await tx
          .update(ingestJobObjects)
          .set({
            status: outcome.status,
            threadId: "",
            chunks: outcome.status === "succeeded" ? outcome.chunks : 0,
            errorMessage: outcome.status === "failed" ? outcome.error : "",
          })
          .where(and(eq(ingestJobObjects.jobId, job.id), eq(ingestJobObjects.key, key)));
        await tx
          .update(ingestJobs)
          .set(
            outcome.status === "failed"
              ? { objectsFailed: sql`${ingestJobs.objectsFailed} + 1` }
              : { objectsSucceeded: sql`${ingestJobs.objectsSucceeded} + 1` },
          )
          .where(eq(ingestJobs.id, job.id));
        if (outcome.status !== "succeeded") return;
        const state = and(
          eq(ingestObjectStates.orgId, job.orgId),
          eq(ingestObjectStates.pipelineId, job.pipelineId),
          eq(ingestObjectStates.sourceId, job.sourceId),
          eq(ingestObjectStates.key, key),
        );
        if (outcome.change === "delete") {
          await tx.delete(ingestObjectStates).where(state);
          return;
        }
        await tx
          .insert(ingestObjectStates)
          .values({
            orgId: job.orgId,
            pipelineId: job.pipelineId,
            sourceId: job.sourceId,
            key,
            etag: outcome.etag,
            chunks: outcome.chunks,
          })
          .onConflictDoUpdate({
            target: [
              ingestObjectStates.orgId,
              ingestObjectStates.pipelineId,
              ingestObjectStates.sourceId,
              ingestObjectStates.key,
            ],
            set: { etag: outcome.etag, chunks: outcome.chunks, ingestedAt: epochNow },
          });
      });
    },

    /** The etag the job's pipeline last ingested of one object of its source; undefined when never. */
    async ingestedEtag(job: JobRow, key: string): Promise<string | undefined> {
      const [row] = await db
        .select({ etag: ingestObjectStates.etag })
        .from(ingestObjectStates)
        .where(
          and(
            eq(ingestObjectStates.orgId, job.orgId),
            eq(ingestObjectStates.pipelineId, job.pipelineId),
            eq(ingestObjectStates.sourceId, job.sourceId),
            eq(ingestObjectStates.key, key),
          ),
        );
      return row?.etag;
    },

    /** The etags the pipeline last ingested, by key, for the objects of a source. */
    async ingestedEtags(orgId: string, pipelineId: string, sourceId: string): Promise<Map<string, string>> {
      const rows = await db
        .select({ key: ingestObjectStates.key, etag: ingestObjectStates.etag })
        .from(ingestObjectStates)
        .where(
          and(
            eq(ingestObjectStates.orgId, orgId),
            eq(ingestObjectStates.pipelineId, pipelineId),
            eq(ingestObjectStates.sourceId, sourceId),
          ),
        );
      return new Map(rows.map((r) => [r.key, r.etag]));
    },

    /** Ends the job with its final status, computed from its objects, if `owner` still holds it. */
    async finish(job: JobRow, owner: string, status: JobStatusName, errorMessage: string): Promise<void> {
      await db
        .update(ingestJobs)
        .set({ status, errorMessage, finishedAt: epochNow, leaseOwner: "", leaseExpiresAt: 0 })
        .where(and(eq(ingestJobs.id, job.id), eq(ingestJobs.leaseOwner, owner)));
    },

    /**
     * Queues a FAILED or PARTIALLY_FAILED job again as its next attempt: failed objects go back to
     * pending, succeeded ones stay done. Undefined when the job is in another status.
     */
    async retry(orgId: string, bucket: string, jobId: string): Promise<JobRow | undefined> {
      return db.transaction(async (tx) => {
        const [job] = await tx
          .select()
          .from(ingestJobs)
          .where(and(jobOf(orgId, bucket, jobId), inArray(ingestJobs.status, ["failed", "partially_failed"])))
          .for("update");
        if (!job) return undefined;
        await tx
          .update(ingestJobObjects)
          .set({ status: "pending", errorMessage: "" })
          .where(and(eq(ingestJobObjects.jobId, jobId), eq(ingestJobObjects.status, "failed")));
        const [row] = await tx
          .update(ingestJobs)
          .set({
            status: "queued",
            attempt: sql`${ingestJobs.attempt} + 1`,
            // A job whose listing failed lists again; one that listed keeps its objects.
            objectsFailed: 0,
            errorMessage: "",
            startedAt: 0,
            finishedAt: 0,
            leaseOwner: "",
            leaseExpiresAt: 0,
          })
          .where(eq(ingestJobs.id, jobId))
          .returning();
        return row;
      });
    },
  };
  return store;
}

export type JobStore = ReturnType<typeof createJobStore>;
