import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import {
  ActiveRunPhase,
  ActiveRunSchema,
  type ActiveRun,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type {
  EnqueueActionRequest,
  EnqueueBulkActionsRequest,
  ListActiveRunsRequest,
  WatchActionRunRequest,
} from "../../../../gen/platform/data/actions/v1/actions_service_pb.js";
import type { Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import type { ActionsServiceImplementation } from "../../../../gen/platform/data/actions/v1/actions_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionRunner, PreparedAction } from "./action-runner.js";
import type { ActionQueueStore } from "./action-queue-store.js";
import { queueEntryOf } from "./queue-dispatch.js";
import type { QueueBuckets, QueueCatalog } from "./queue-ports.js";
import type { RunWatch } from "./queue-watch.js";

/** Selections one EnqueueBulkActions call may carry. */
export const MAX_BULK_SELECTIONS = 1000;
/** Queued and running runs ListActiveRuns answers for one bucket, oldest first. */
export const MAX_ACTIVE_RUNS = 1000;
/** Slots of a bulk call prepared at once (each reads the bucket's objects or tables). */
const PREPARE_CONCURRENCY = 8;
const MAX_BATCH_ID_LENGTH = 128;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface QueueHandlerOptions {
  readonly store: ActionQueueStore;
  readonly runner: ActionRunner;
  readonly catalog: QueueCatalog;
  readonly buckets: QueueBuckets;
  readonly watch: RunWatch;
  /** Tells this process's worker that work was queued. */
  readonly wake: () => void;
  readonly now?: () => number;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

/** The queue's methods, typed as they answer (they fill ActionsServiceImplementation: checked below). */
export interface QueueHandlers {
  enqueueAction(request: EnqueueActionRequest, context: HandlerContext): Promise<EnqueueActionAnswer>;
  enqueueBulkActions(request: EnqueueBulkActionsRequest, context: HandlerContext): Promise<EnqueueBulkActionsAnswer>;
  watchActionRun(request: WatchActionRunRequest, context: HandlerContext): AsyncGenerator<ActionEvent>;
  listActiveRuns(request: ListActiveRunsRequest, context: HandlerContext): Promise<{ runs: ActiveRun[] }>;
}

export interface EnqueueActionAnswer {
  readonly runId: string;
  readonly reverseTs: string;
  readonly batchId: string;
}

export interface EnqueueBulkActionsAnswer {
  readonly batchId: string;
  /** Aligned with the request's selections: "" where the slot failed. */
  readonly runIds: string[];
  /** Aligned with the request's selections: "" where the slot was enqueued. */
  readonly errors: string[];
}

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/**
 * The queue's methods of the actions service. Enqueueing adapts each dispatch at once (the runner's
 * prepare: its errors are the caller's) and then only records it; a worker of any process runs it.
 */
export function createQueueHandlers(options: QueueHandlerOptions): QueueHandlers {
  // The service's generated interface takes them as they are.
  return queueHandlers(options) satisfies Pick<ActionsServiceImplementation, keyof QueueHandlers>;
}

function queueHandlers(options: QueueHandlerOptions): QueueHandlers {
  const { store, runner, catalog, buckets, watch } = options;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});

  async function authorizedBucket(orgId: string, bucket: string): Promise<string> {
    if (bucket === "") throw invalid("bucket is required");
    // Another organization's bucket is as absent as one that does not exist.
    if (!(await buckets.exists(orgId, bucket))) throw new ConnectError(`bucket ${bucket} not found`, Code.NotFound);
    return bucket;
  }

  function batchIdOf(batchId: string): string {
    if (batchId.length > MAX_BATCH_ID_LENGTH) throw invalid(`batch_id: at most ${MAX_BATCH_ID_LENGTH} characters`);
    return batchId;
  }

  /** What a slot of a bulk call reports: a deliberate API error's message, else a generic one (logged in full). */
  function slotError(error: unknown): string {
    if (error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown)
      return error.rawMessage;
    log("preparing an action dispatch failed", { error: error instanceof Error ? error.message : String(error) });
    return "the selection could not be prepared (internal error)";
  }

  /**
   * Whether a slot's error is the whole call's: about the action or the params, which every slot
   * shares, or a capability the server lacks, rather than about the slot's selection.
   */
  function sharedByAllSlots(error: unknown): boolean {
    if (!(error instanceof ConnectError)) return false;
    if (error.code === Code.FailedPrecondition) return true;
    return /^(params|action_id)\b/.test(error.rawMessage);
  }

  return {
    async enqueueAction(request, context) {
      const { orgId } = principalOf(context);
      const batchId = batchIdOf(request.batchId);
      const prepared = await runner.prepare(orgId, {
        selection: request.selection,
        actionId: request.actionId,
        params: request.params ?? {},
        batchId,
        enqueuedAtMs: now(),
      });
      await store.enqueue([queueEntryOf(prepared.dispatch)]);
      options.wake();
      const { runId, reverseTs } = prepared.dispatch;
      return { runId, reverseTs, batchId };
    },

    async enqueueBulkActions(request, context) {
      const { orgId } = principalOf(context);
      if (request.actionId === "") throw invalid("action_id is required");
      if (!catalog.get(request.actionId))
        throw new ConnectError(`action_id: no action ${request.actionId}`, Code.NotFound);
      if (request.selections.length === 0) throw invalid("selections is required");
      if (request.selections.length > MAX_BULK_SELECTIONS)
        throw invalid(`selections: at most ${MAX_BULK_SELECTIONS} per call, got ${request.selections.length}`);
      const batchId = randomUUID();
      const enqueuedAtMs = now();
      const params: JsonObject = request.params ?? {};
      const slots = await mapConcurrently(
        request.selections,
        PREPARE_CONCURRENCY,
        async (selection: Selection): Promise<PreparedAction | { error: unknown }> => {
          try {
            return await runner.prepare(orgId, {
              selection,
              actionId: request.actionId,
              params,
              batchId,
              enqueuedAtMs,
            });
          } catch (error) {
            return { error };
          }
        },
      );
      // A problem every slot shares fails the call, and nothing is enqueued.
      for (const slot of slots) if ("error" in slot && sharedByAllSlots(slot.error)) throw slot.error;
      const prepared = slots.filter((slot): slot is PreparedAction => "dispatch" in slot);
      await store.enqueue(prepared.map((slot) => queueEntryOf(slot.dispatch)));
      if (prepared.length > 0) options.wake();
      return {
        batchId,
        runIds: slots.map((slot) => ("dispatch" in slot ? slot.dispatch.runId : "")),
        errors: slots.map((slot) => ("error" in slot ? slotError(slot.error) : "")),
      };
    },

    async *watchActionRun(request, context) {
      const { orgId } = principalOf(context);
      if (request.runId === "") throw invalid("run_id is required");
      if (!UUID.test(request.runId)) throw invalid(`run_id: "${request.runId}" is not a run id`);
      const bucket = await authorizedBucket(orgId, request.bucket);
      yield* watch(orgId, bucket, request.runId.toLowerCase(), context.signal);
    },

    async listActiveRuns(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await authorizedBucket(orgId, request.bucket);
      const rows = await store.listActive(orgId, bucket, MAX_ACTIVE_RUNS);
      return {
        runs: rows.map((row) =>
          create(ActiveRunSchema, {
            runId: row.runId,
            actionId: row.actionId,
            selectionLabel: row.selectionLabel,
            batchId: row.batchId,
            phase: row.status === "running" ? ActiveRunPhase.RUNNING : ActiveRunPhase.QUEUED,
            enqueuedAtMs: BigInt(row.enqueuedAt),
            startedAtMs: BigInt(row.status === "running" ? row.startedAt : 0),
            threadId: row.threadId,
          }),
        ),
      };
    },
  };
}

/** `map` with at most `limit` calls in flight, results in input order. */
async function mapConcurrently<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
