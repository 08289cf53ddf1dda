import type { Database } from "../../db/database.js";
import type { ActionRunner } from "./action-runner.js";
import { createQueueHandlers, type QueueHandlers } from "./action-queue-handlers.js";
import { createActionQueueStore } from "./action-queue-store.js";
import { createActionQueueWorker } from "./action-queue-worker.js";
import { createRunEventHub } from "./queue-event-hub.js";
import type { QueueBuckets, QueueCatalog, QueueManifests, QueueThreads } from "./queue-ports.js";
import { createRunWatch } from "./queue-watch.js";

export interface ActionQueueOptions {
  readonly db: Database;
  readonly runner: ActionRunner;
  readonly catalog: QueueCatalog;
  readonly buckets: QueueBuckets;
  readonly manifests: QueueManifests;
  readonly threads: QueueThreads;
  /** Runs this process executes at once (--action-concurrency). */
  readonly concurrency?: number;
  /** Runs of one organization executing at once across every process (--action-org-concurrency). */
  readonly perOrganization?: number;
  /** How long a worker's claim holds without renewal. */
  readonly leaseMs?: number;
  /** The worker's safety-net poll for work enqueued by other processes. */
  readonly pollMs?: number;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export interface ActionQueue {
  /** EnqueueAction, EnqueueBulkActions, WatchActionRun and ListActiveRuns. */
  readonly handlers: QueueHandlers;
  /** Starts this process's worker (with the server). */
  start(): void;
  /** Stops it: runs in progress here are let go and resumed by the next worker to claim them. */
  stop(): Promise<void>;
}

/** The durable half of the actions service: the queue's methods, and the worker that runs what they queue. */
export function createActionQueue(options: ActionQueueOptions): ActionQueue {
  const store = createActionQueueStore(options.db);
  const hub = createRunEventHub();
  const worker = createActionQueueWorker({ ...options, store, hub });
  const watch = createRunWatch({ ...options, store, hub });
  return {
    handlers: createQueueHandlers({ ...options, store, watch, wake: () => worker.wake() }),
    start: () => worker.start(),
    stop: () => worker.stop(),
  };
}
