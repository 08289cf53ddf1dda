import type { ActionRunManifest } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
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

/** Run manifests as stored in the run's bucket (`_actions/runs/{reverse_ts}_{run_id}/manifest.json`). */
export interface QueueManifests {
  /** The manifest at `key`, or undefined when there is none (yet). */
  read(orgId: string, bucket: string, key: string): Promise<ActionRunManifest | undefined>;
  /** Keys under `prefix`, in key order: how a run the queue never held (RunAction) is found. */
  list(orgId: string, bucket: string, prefix: string): AsyncIterable<string>;
}

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
