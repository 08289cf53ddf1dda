import { startPollLoop, type PollLoop } from "../../background/poll-loop.js";
import type { ActionObjects } from "./actions-ports.js";
import { reverseTimestamp, RUNS_PREFIX, runPrefix } from "./run-keys.js";
import type { RunManifests } from "./run-manifests.js";

/** How long a run's folder is kept unless its output was saved (server flag --action-run-retention-ms). */
export const DEFAULT_RUN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** How often the sweep looks. */
export const RUN_SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** Run folders one bucket's sweep removes per pass (the next pass goes on). */
const MAX_SWEPT_PER_BUCKET = 1000;

export interface RunRetentionOptions {
  readonly objects: ActionObjects;
  readonly manifests: RunManifests;
  /** Every bucket of every organization. */
  readonly buckets: () => Promise<readonly { orgId: string; bucket: string }[]>;
  readonly retentionMs: number;
  readonly now?: () => number;
}

/**
 * The storage lifecycle rule of temporary runs: a run folder older than the retention is deleted
 * with everything in it, unless its manifest records a promotion (a saved output keeps its run).
 * Older folders are exactly those listed after the cutoff's reverse timestamp, so a sweep reads
 * only what it deletes or keeps.
 */
export async function sweepExpiredRuns(options: RunRetentionOptions): Promise<number> {
  const now = options.now ?? Date.now;
  const cutoff = `${RUNS_PREFIX}${reverseTimestamp(now() - options.retentionMs)}`;
  let removed = 0;
  for (const { orgId, bucket } of await options.buckets()) {
    const folders = await options.manifests.listFolders(orgId, bucket, MAX_SWEPT_PER_BUCKET, cutoff);
    for (const folder of folders) {
      const manifest = await options.manifests.read(orgId, bucket, folder.reverseTs, folder.runId);
      if (manifest && manifest.promoted.length > 0) continue;
      await deleteFolder(options.objects, orgId, bucket, runPrefix(folder.reverseTs, folder.runId));
      removed++;
    }
  }
  return removed;
}

async function deleteFolder(objects: ActionObjects, orgId: string, bucket: string, prefix: string) {
  for (;;) {
    const page = await objects.list(orgId, bucket, { prefix, delimiter: "", after: "", maxKeys: 1000 });
    for (const key of page.keys) await objects.delete(orgId, bucket, key);
    if (page.next === "" || page.keys.length === 0) return;
  }
}

/** The sweep in the server's background loop. */
export function startRunRetention(
  options: RunRetentionOptions & { readonly onError: (error: unknown) => void },
): PollLoop {
  return startPollLoop(async () => void (await sweepExpiredRuns(options)), {
    pollMs: RUN_SWEEP_INTERVAL_MS,
    onError: options.onError,
  });
}
