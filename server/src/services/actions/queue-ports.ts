import type { RunManifests } from "./run-manifests.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionDefinition } from "./action-definition.js";

/**
 * What the action queue needs of the rest of the platform, filled where the services are composed
 * (server/src/data-platform.ts). The runner is the other half: action-runner.ts.
 */

export interface QueueBuckets {
  /** Whether the bucket exists in the organization: the queue's methods authorize against it. */
  exists(orgId: string, bucket: string): Promise<boolean>;
}

export interface QueueCatalog {
  /** The catalog action a queued row names; undefined once it is no longer offered. */
  get(actionId: string): ActionDefinition | undefined;
}

/** Run manifests as the runner writes them (run-manifests.ts). */
export type QueueManifests = Pick<RunManifests, "read" | "find">;

/** One value a thread yielded: a run's `progress`. */
export interface ThreadYield {
  readonly stepPath: string;
  readonly stepName: string;
  readonly value: JsonObject;
}

export interface QueueThreads {
  /**
   * The values a thread yielded, from its first, until the thread ends: how a watch follows a run
   * that a worker of another process executes (the thread's events are in the shared database).
   */
  yields(orgId: string, threadId: string, signal: AbortSignal): AsyncIterable<ThreadYield>;
}
