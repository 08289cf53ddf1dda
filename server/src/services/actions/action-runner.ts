import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import type { Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionDefinition } from "./action-definition.js";

/**
 * How the service runs one action, shared by RunAction (in the caller's request) and the queue
 * (in a worker, possibly after a restart): adapt the request, then execute the dispatch.
 */

/** One dispatch of an action against a selection: everything a worker needs to run it. */
export interface ActionDispatch {
  readonly runId: string;
  /** `{reverse_ts}` of the run's storage prefix `_actions/runs/{reverse_ts}_{run_id}/`. */
  readonly reverseTs: string;
  readonly orgId: string;
  /** The selection's bucket, which holds the run's manifest. */
  readonly bucket: string;
  readonly actionId: string;
  readonly selection: Selection;
  readonly params: JsonObject;
  /** Empty unless the run was enqueued as part of a batch. */
  readonly batchId: string;
  /** Epoch milliseconds; 0 for a run started directly with RunAction. */
  readonly enqueuedAtMs: number;
}

export interface PreparedAction {
  readonly action: ActionDefinition;
  readonly dispatch: ActionDispatch;
}

export interface ActionRequest {
  readonly selection?: Selection | undefined;
  readonly actionId: string;
  readonly params?: JsonObject | undefined;
  readonly batchId?: string | undefined;
  readonly enqueuedAtMs?: number | undefined;
}

export interface ActionRunner {
  /**
   * Adaptation, whose errors are the caller's and synchronous: an unknown action (NOT_FOUND
   * naming action_id), a selection shape or pillar the action does not accept (INVALID_ARGUMENT
   * naming the selection member), a missing bucket, object, collection or table (NOT_FOUND),
   * invalid params (INVALID_ARGUMENT naming params.<field>), a capability the server lacks
   * (FAILED_PRECONDITION).
   */
  prepare(orgId: string, request: ActionRequest): Promise<PreparedAction>;

  /**
   * Runs a prepared dispatch to its end: `started`, `progress` (async actions only), then
   * `completed` or `failed`, and the terminal manifest. A run failure never throws: it becomes
   * the `failed` event and a FAILED manifest. `threadId` resumes a run whose thread already exists
   * (a worker taking over after a crash); `onThread` is awaited once the thread exists, before
   * `started` is yielded. What the caller itself ends is thrown, not recorded: an abort of
   * `signal`, or an error `onThread` throws (the run is then left to whoever resumes it).
   */
  execute(
    prepared: PreparedAction,
    options?: {
      readonly signal?: AbortSignal;
      readonly threadId?: string;
      readonly onThread?: (threadId: string) => Promise<void>;
    },
  ): AsyncIterable<ActionEvent>;

  /** Records a dispatch that failed after it was enqueued: a FAILED manifest, visible in history. */
  failDispatch(dispatch: ActionDispatch, error: string): Promise<void>;
}
