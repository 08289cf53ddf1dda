import { randomUUID } from "node:crypto";
import { listingPrefix, planChanges } from "./change-planning.js";
import type { SourceDirectory, SourceObject } from "./ingest-ports.js";
import type { JobStore } from "./job-store.js";
import type { RuleStore } from "./rule-store.js";
import type { SyncRunRow, SyncStore } from "./sync-store.js";

export interface SyncRunnerDependencies {
  readonly sources: SourceDirectory;
  readonly rules: RuleStore;
  readonly jobs: JobStore;
  readonly syncs: SyncStore;
  readonly owner: string;
  readonly leaseMs: number;
}

/** Objects counted between two progress writes of a run. */
const PROGRESS_EVERY = 500;

/**
 * Runs one claimed sync run. Discovery enumerates the source and counts its objects. Ingestion
 * enumerates it once and, for each of its unpaused rules (or the ones asked for), queues one ingest
 * job with the objects that are new or changed for the rule's pipeline, and the deletions; a rule
 * with nothing to do gets no job.
 */
export async function runSync(run: SyncRunRow, deps: SyncRunnerDependencies, signal: AbortSignal): Promise<void> {
  const { syncs, owner, leaseMs } = deps;
  try {
    const reader = await deps.sources.reader(run.orgId, run.bucket, run.sourceId);
    const rules =
      run.kind === "ingestion"
        ? (await deps.rules.active(run.orgId, run.bucket, run.sourceId, ["on_change", "schedule", "manual"])).filter(
            (rule) => run.ruleIds.length === 0 || run.ruleIds.includes(rule.id),
          )
        : [];
    // Discovery lists everything; ingestion only what some rule can take.
    const prefixes = rules.map((rule) => rule.filterPrefix);
    const prefix = run.kind === "ingestion" && prefixes.length > 0 ? commonPrefix(prefixes) : "";
    const listing: SourceObject[] = [];
    for await (const object of reader.list(prefix)) {
      signal.throwIfAborted();
      listing.push(object);
      if (listing.length % PROGRESS_EVERY === 0) {
        await syncs.progress(run.id, owner, { objectsDiscovered: listing.length }, leaseMs);
      }
    }
    let jobsStarted = 0;
    for (const rule of rules) {
      const ingested = await deps.jobs.ingestedEtags(run.orgId, rule.pipelineId, run.sourceId);
      const filter = { prefix: rule.filterPrefix, contentTypes: rule.filterContentTypes };
      const objects = planChanges(
        listing,
        { filter, prefix: listingPrefix(rule.filterPrefix, "") },
        ingested,
        run.fullResync,
      );
      if (objects.length === 0) continue;
      await deps.jobs.create(run.orgId, {
        id: randomUUID(),
        bucket: run.bucket,
        ruleId: rule.id,
        pipelineId: rule.pipelineId,
        sourceId: run.sourceId,
        selection: { force: run.fullResync },
        objects,
      });
      jobsStarted++;
    }
    await syncs.progress(run.id, owner, { objectsDiscovered: listing.length, jobsStarted }, leaseMs);
    await syncs.finish(run.id, owner, "succeeded");
  } catch (error) {
    if (signal.aborted) return;
    await syncs.finish(run.id, owner, "failed", error instanceof Error ? error.message : String(error));
  }
}

function commonPrefix(values: readonly string[]): string {
  let prefix = values[0] ?? "";
  for (const value of values) while (!value.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
