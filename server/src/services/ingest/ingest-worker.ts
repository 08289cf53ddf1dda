import { randomUUID } from "node:crypto";
import { startPollLoop, type PollLoop } from "../../background/poll-loop.js";
import type { Database } from "../../db/database.js";
import { listingPrefix, planChanges } from "./change-planning.js";
import type { PipelineDirectory, SourceDirectory, SourceObject, TemplateRunner, VectorSink } from "./ingest-ports.js";
import { createJobStore, type JobRow } from "./job-store.js";
import { ingestObject, type ObjectOutcome } from "./object-ingestion.js";
import { createRuleStore } from "./rule-store.js";
import { nextCronTime } from "./cron-schedule.js";
import { createSyncStore } from "./sync-store.js";
import { runSync } from "./sync-runner.js";

export interface IngestWorkerOptions {
  readonly db: Database;
  readonly pipelines: PipelineDirectory;
  readonly sources: SourceDirectory;
  readonly vectors: VectorSink;
  readonly runner: TemplateRunner;
  /** How long a claimed job stays this process's without a renewal; a dead process's jobs are taken over after it. */
  readonly leaseMs: number;
  /** Largest object read for ingestion. */
  readonly maxObjectBytes: number;
  /** Runs of one object (its first and automatic retries) before it counts as failed. */
  readonly maxTries?: number;
  readonly pollMs?: number;
  readonly log: (message: string, fields: Record<string, unknown>) => void;
}

export interface IngestWorker {
  start(): void;
  /** Looks for work at once (after a job was queued in this process). */
  wake(): void;
  stop(): Promise<void>;
}

/** How many objects the summary of a failed job names. */
const NAMED_FAILURES = 3;

/**
 * The ingest jobs' worker: any process sharing the database runs one. A pass claims one job (a
 * lease, renewed while it works), lists its objects if that is still to do, then processes them one
 * by one, committing each object's outcome on its own. After a crash the job is taken over where it
 * stopped; an object that was being processed runs again and replaces its chunks, so nothing is
 * doubled. A pass also starts the scheduled rules that are due.
 */
export function createIngestWorker(options: IngestWorkerOptions): IngestWorker {
  const owner = `ingest-${randomUUID()}`;
  const jobs = createJobStore(options.db);
  const rules = createRuleStore(options.db);
  const syncs = createSyncStore(options.db);
  const maxTries = options.maxTries ?? 2;
  const stopping = new AbortController();
  let loop: PollLoop | undefined;

  async function startDueSchedules(): Promise<void> {
    const due = await rules.takeDue(Date.now(), (rule) => nextCronTime(rule.scheduleCron, Date.now()));
    for (const rule of due) {
      await jobs.create(rule.orgId, {
        id: randomUUID(),
        bucket: rule.bucket,
        ruleId: rule.id,
        pipelineId: rule.pipelineId,
        sourceId: rule.sourceId,
        selection: {},
      });
    }
  }

  async function pass(): Promise<boolean> {
    await startDueSchedules();
    const sync = await syncs.claim(owner, options.leaseMs);
    if (sync) {
      await runSync(
        sync,
        { sources: options.sources, rules, jobs, syncs, owner, leaseMs: options.leaseMs },
        stopping.signal,
      );
      return true;
    }
    const job = await jobs.claim(owner, options.leaseMs);
    if (!job) return false;
    const lost = new AbortController();
    const onStop = () => lost.abort();
    stopping.signal.addEventListener("abort", onStop);
    const renewal = setInterval(
      () => {
        jobs.renew(job.id, owner, options.leaseMs).then(
          (held) => held || lost.abort(),
          () => {},
        );
      },
      Math.max(200, Math.floor(options.leaseMs / 3)),
    );
    try {
      await run(job, lost.signal);
    } finally {
      clearInterval(renewal);
      stopping.signal.removeEventListener("abort", onStop);
      if (stopping.signal.aborted) await jobs.release(job.id, owner);
    }
    return true;
  }

  async function run(job: JobRow, signal: AbortSignal): Promise<void> {
    const fail = (message: string) => jobs.finish(job, owner, "failed", message);
    const rule = await rules.get(job.orgId, job.bucket, job.ruleId);
    const pipeline = await options.pipelines.getPipeline(job.orgId, job.bucket, job.pipelineId);
    if (!pipeline) return fail(`pipeline ${job.pipelineId} no longer exists`);
    const target = pipeline.vector;
    if (!target)
      return fail(`pipeline ${job.pipelineId} has a ${pipeline.facet} destination, which is not ingested yet`);
    let reader;
    try {
      reader = await options.sources.reader(job.orgId, job.bucket, job.sourceId);
    } catch (error) {
      return fail(`source ${job.sourceId} cannot be read: ${messageOf(error)}`);
    }
    if (!job.listed) {
      // Without its rule the job no longer knows which objects it is for.
      if (!rule) return fail(`rule ${job.ruleId} was deleted before the job listed its objects`);
      const filter = { prefix: rule.filterPrefix, contentTypes: rule.filterContentTypes };
      const prefix = job.selection.prefix ?? "";
      const listing: SourceObject[] = [];
      try {
        for await (const object of reader.list(listingPrefix(filter.prefix, prefix))) {
          if (signal.aborted) return;
          listing.push(object);
        }
      } catch (error) {
        return fail(`listing source ${job.sourceId} failed: ${messageOf(error)}`);
      }
      const ingested = await jobs.ingestedEtags(job.orgId, job.pipelineId, job.sourceId);
      await jobs.setListed(job.id, planChanges(listing, { filter, prefix }, ingested, job.selection.force === true));
    }

    for (;;) {
      const batch = await jobs.pendingObjects(job.id, 16);
      if (batch.length === 0) break;
      for (const object of batch) {
        if (signal.aborted) return;
        let outcome: ObjectOutcome;
        try {
          outcome = await ingestObject(
            { job, pipeline, target, reader, ...options, jobs, ingestedEtag: await jobs.ingestedEtag(job, object.key) },
            object,
            signal,
          );
        } catch (error) {
          if (signal.aborted) return;
          outcome = { status: "failed", error: messageOf(error), permanent: false };
        }
        if (outcome.status === "failed" && !outcome.permanent && object.tries + 1 < maxTries) {
          await jobs.retryObject(job.id, object.key); // runs again in this pass
          continue;
        }
        await jobs.finishObject(job, object.key, outcome);
      }
    }
    const failures = await jobs.failedObjects(job.id, NAMED_FAILURES);
    const done = await jobs.get(job.orgId, job.bucket, job.id);
    if (!done) return;
    if (failures.length === 0) return jobs.finish(job, owner, "succeeded", "");
    const summary = `${done.objectsFailed} of ${done.objectsTotal} objects failed: ${failures
      .map((f) => `${f.key}: ${f.errorMessage}`)
      .join("; ")}${done.objectsFailed > failures.length ? "; ..." : ""}`;
    await jobs.finish(job, owner, done.objectsSucceeded > 0 ? "partially_failed" : "failed", summary.slice(0, 2000));
  }

  return {
    start() {
      loop ??= startPollLoop(pass, {
        pollMs: options.pollMs ?? 2000,
        onError: (error) => options.log("ingest pass failed", { error }),
      });
    },
    wake() {
      loop?.wake();
    },
    async stop() {
      stopping.abort();
      await loop?.stop();
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
