import type { ActionsServiceImplementation } from "../../../../gen/platform/data/actions/v1/actions_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { ActionsPorts } from "./actions-ports.js";
import { availableActions } from "./available-actions.js";
import type { ActionCatalog } from "./create-action-runner.js";
import type { ActionDispatch, ActionRunner } from "./action-runner.js";
import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import { failedEvent } from "./event-translation.js";
import { detached } from "./detached-stream.js";
import { saveToObject, saveToTable } from "./output-saving.js";
import { recentRuns, requireRun, siblingOutput } from "./run-history.js";
import type { RunManifests } from "./run-manifests.js";
import type { RunSaveLock } from "./run-save-lock.js";
import { invalid, notFound, resolveSelection } from "./selection-adaptation.js";

export type ActionRunHandlers = Pick<
  ActionsServiceImplementation,
  "listAvailableActions" | "runAction" | "listRecentActions" | "getActionRun" | "saveActionOutput"
>;

export interface ActionRunHandlerOptions {
  readonly ports: ActionsPorts;
  readonly runner: ActionRunner;
  readonly catalog: ActionCatalog;
  readonly manifests: RunManifests;
  /** Saves of one run take turns (run-save-lock.ts). */
  readonly saveLock: RunSaveLock;
  readonly now?: () => number;
  /** Aborted when the service stops: a run in progress then ends with a FAILED manifest. */
  readonly stopping?: AbortSignal;
}

/** What a run cut short by the service stopping records. */
export const STOPPED_RUN_ERROR = "the server stopped before the run ended";

/**
 * The run half of the actions service: listing, running, history and saving. Every call is
 * authorized against the bucket of its selection or request in the caller's organization; a
 * bucket or run of another organization is NOT_FOUND, like one that does not exist.
 */
export function createActionRunHandlers(options: ActionRunHandlerOptions): ActionRunHandlers {
  const { ports, runner, catalog, manifests } = options;
  const now = options.now ?? Date.now;
  const stopping = options.stopping;

  /** A run the stopping service cut short: recorded as FAILED, its stream ended with `failed`. */
  async function* endedOnStop(
    events: AsyncIterable<ActionEvent>,
    dispatch: ActionDispatch,
  ): AsyncGenerator<ActionEvent> {
    try {
      yield* events;
    } catch (error) {
      if (!stopping?.aborted) throw error;
      await runner.failDispatch(dispatch, STOPPED_RUN_ERROR).catch(() => undefined);
      yield failedEvent(STOPPED_RUN_ERROR);
    }
  }

  async function requireBucket(orgId: string, bucket: string): Promise<string> {
    if (bucket.trim() === "") throw invalid("bucket is required");
    if (!(await ports.objects.bucketExists(orgId, bucket))) throw notFound(`bucket ${bucket} not found`);
    return bucket;
  }

  return {
    async listAvailableActions(request, context) {
      const { orgId } = principalOf(context);
      const selection = await resolveSelection(ports, orgId, request.selection);
      return { actions: await availableActions(catalog, selection, request.search) };
    },

    async *runAction(request, context) {
      const { orgId } = principalOf(context);
      // Adaptation errors are the call's own error, before any event.
      const prepared = await runner.prepare(orgId, {
        selection: request.selection,
        actionId: request.actionId,
        params: request.params ?? {},
      });
      // The run goes on to its manifest when the caller hangs up: closing a stream never cancels.
      yield* detached(endedOnStop(runner.execute(prepared, stopping ? { signal: stopping } : {}), prepared.dispatch));
    },

    async listRecentActions(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await requireBucket(orgId, request.bucket);
      return {
        runs: await recentRuns(manifests, orgId, bucket, {
          limit: request.limit,
          status: request.status,
          actionId: request.actionId,
        }),
      };
    },

    async getActionRun(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await requireBucket(orgId, request.bucket);
      const manifest = await requireRun(manifests, orgId, bucket, request.runId);
      const sibling = request.inlineSibling ? await siblingOutput(ports.objects, orgId, manifest) : undefined;
      return { manifest, ...(sibling ? { siblingOutput: sibling } : {}) };
    },

    async saveActionOutput(request, context) {
      const { orgId } = principalOf(context);
      const bucket = await requireBucket(orgId, request.bucket);
      const target = request.target;
      if (target.case !== "s3" && target.case !== "warehouseTable")
        throw invalid("a target is required: s3 or warehouse_table");
      const run = await requireRun(manifests, orgId, bucket, request.runId);
      // The manifest is read again once the run is this save's: the save ahead may have stamped it.
      return options.saveLock(orgId, run.runId, async () => {
        const manifest = await requireRun(manifests, orgId, bucket, request.runId);
        return target.case === "s3"
          ? saveToObject(ports, manifests, orgId, manifest, target.value, now())
          : saveToTable(ports, manifests, orgId, manifest, target.value, now());
      });
    },
  };
}
