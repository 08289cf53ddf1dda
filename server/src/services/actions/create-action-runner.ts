import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import {
  ActionRunManifestSchema,
  ActionRunStatus,
  type ActionRunManifest,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionDefinition } from "./action-definition.js";
import type { ActionDispatch, ActionRequest, ActionRunner, PreparedAction } from "./action-runner.js";
import type { ActionsPorts, ActionTemplate } from "./actions-ports.js";
import { checkBindings, resolveBindings } from "./binding-resolution.js";
import { completedEvent, failedEvent, progressEvent, startedEvent, threadFailure } from "./event-translation.js";
import { outputKindOf, routeOutput } from "./output-routing.js";
import { checkParams, checkParamsAlone } from "./params-contract.js";
import { reverseTimestamp, uuidV7 } from "./run-keys.js";
import { createRunManifests, type RunManifests } from "./run-manifests.js";
import { invalid, notFound, resolveSelection, selectionMismatch } from "./selection-adaptation.js";

export interface ActionRunnerOptions {
  readonly ports: ActionsPorts;
  /** The action catalog (the shipped definitions, or a test's). */
  readonly actions: readonly ActionDefinition[];
  readonly now?: () => number;
  /** Gets an unexpected error of a run (the run itself reports a generic failure). */
  readonly onError?: (error: unknown, fields: Record<string, unknown>) => void;
}

export interface ActionCatalog {
  readonly actions: readonly ActionDefinition[];
  action(actionId: string): ActionDefinition | undefined;
  /** The action's template; FAILED_PRECONDITION when the script service has none of that id. */
  template(action: ActionDefinition): Promise<ActionTemplate>;
}

export interface ActionRunnerParts {
  readonly runner: ActionRunner;
  readonly catalog: ActionCatalog;
  readonly manifests: RunManifests;
}

/** What the caller's error message may say: a deliberate API error's own message, else a generic one. */
export function publicMessage(error: unknown): string {
  if (error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown)
    return error.rawMessage;
  return "the action failed with an internal error";
}

/**
 * The runner shared by RunAction and the queue: adaptation (prepare), execution (execute) and
 * dispatch-time failures (failDispatch), each leaving the run's manifest in its bucket.
 */
export function createActionRunner(options: ActionRunnerOptions): ActionRunnerParts {
  const { ports } = options;
  const now = options.now ?? Date.now;
  const manifests = createRunManifests(ports.objects);
  const byId = new Map(options.actions.map((action) => [action.id, action]));
  /** Inputs resolved by prepare, used by execute of the same prepared action (RunAction) instead of reading twice. */
  const resolvedInputs = new WeakMap<PreparedAction, JsonObject>();

  const catalog: ActionCatalog = {
    actions: options.actions,
    action: (actionId) => byId.get(actionId),
    async template(action) {
      const template = await ports.templates.get(action.template);
      if (!template)
        throw new ConnectError(
          `action ${action.id}: its template ${action.template} is not served`,
          Code.FailedPrecondition,
        );
      return template;
    },
  };

  /**
   * The adaptation. With `resolve` the bindings are read (the object's text, a table's rows...)
   * and the params checked with them in place, as a run started now needs them anyway; without,
   * only what costs no read of the data is checked, and the params alone: a queued dispatch reads
   * its data when it executes (where the full check fails the run instead).
   */
  async function adapt(orgId: string, request: ActionRequest, resolve = true) {
    if (request.actionId === "") throw invalid("action_id is required");
    const action = byId.get(request.actionId);
    if (!action) throw notFound(`action_id: no action ${request.actionId}`);
    const selection = await resolveSelection(ports, orgId, request.selection);
    const mismatch = selectionMismatch(action, selection);
    if (mismatch) throw invalid(mismatch);
    for (const capability of action.requires) {
      if (capability === "llm" && !ports.capabilities.llm)
        throw new ConnectError(
          `action ${action.id} needs an LLM endpoint, and none is configured (the operator sets --llm-base-url)`,
          Code.FailedPrecondition,
        );
      if (capability !== "llm")
        throw new ConnectError(
          `action ${action.id} needs ${capability}, which this server lacks`,
          Code.FailedPrecondition,
        );
    }
    const params = request.params ?? {};
    const template = await catalog.template(action);
    if (!resolve) {
      await checkBindings(ports, orgId, action, selection, params);
      checkParamsAlone(template, params, new Set(Object.keys(action.bind)));
      return { action, selection, params, input: undefined };
    }
    const bound = await resolveBindings(ports, orgId, action, selection, params);
    checkParams(template, params, bound);
    return { action, selection, params, input: { ...params, ...bound } };
  }

  async function prepare(orgId: string, request: ActionRequest): Promise<PreparedAction> {
    const enqueuedAtMs = request.enqueuedAtMs ?? 0;
    const { action, selection, params, input } = await adapt(orgId, request, enqueuedAtMs === 0);
    const ms = enqueuedAtMs > 0 ? enqueuedAtMs : now();
    const dispatch: ActionDispatch = {
      // The id carries the millisecond of the reverse timestamp, so a run is found from its id alone.
      runId: uuidV7(ms),
      reverseTs: reverseTimestamp(ms),
      orgId,
      bucket: selection.bucket,
      actionId: action.id,
      selection: request.selection!,
      params,
      batchId: request.batchId ?? "",
      enqueuedAtMs,
    };
    const prepared: PreparedAction = { action, dispatch };
    if (input) resolvedInputs.set(prepared, input);
    return prepared;
  }

  function manifestOf(dispatch: ActionDispatch, action: ActionDefinition | undefined, startedAtMs: number) {
    return create(ActionRunManifestSchema, {
      runId: dispatch.runId,
      actionId: dispatch.actionId,
      bucket: dispatch.bucket,
      batchId: dispatch.batchId,
      reverseTs: dispatch.reverseTs,
      status: ActionRunStatus.RUNNING,
      selection: dispatch.selection,
      params: dispatch.params,
      enqueuedAtMs: BigInt(dispatch.enqueuedAtMs),
      startedAtMs: BigInt(startedAtMs),
      ...(action ? { outputKind: outputKindOf(action) } : {}),
    });
  }

  function finish(manifest: ActionRunManifest, status: ActionRunStatus, startedAtMs: number): number {
    const finishedAt = now();
    manifest.status = status;
    manifest.finishedAtMs = BigInt(finishedAt);
    manifest.durationMs = BigInt(Math.max(0, finishedAt - startedAtMs));
    return finishedAt - startedAtMs;
  }

  async function* execute(
    prepared: PreparedAction,
    execution: {
      readonly signal?: AbortSignal;
      readonly threadId?: string;
      readonly onThread?: (threadId: string) => Promise<void>;
    } = {},
  ): AsyncGenerator<ActionEvent> {
    const { action, dispatch } = prepared;
    // A run resumed on its thread (after a crash) started when its first execution did.
    const resumed = execution.threadId
      ? await manifests.read(dispatch.orgId, dispatch.bucket, dispatch.reverseTs, dispatch.runId).catch(() => undefined)
      : undefined;
    const startedAtMs = resumed && resumed.startedAtMs > 0n ? Number(resumed.startedAtMs) : now();
    const manifest = manifestOf(dispatch, action, startedAtMs);
    const fail = async (error: string, stepPath = "", stepName = "", status = ActionRunStatus.FAILED) => {
      finish(manifest, status, startedAtMs);
      Object.assign(manifest, { error, failedStepPath: stepPath, failedStepName: stepName });
      manifest.outputLocation = { case: undefined };
      await manifests.write(dispatch.orgId, manifest).catch((cause: unknown) => report(cause, dispatch));
      return failedEvent(error, stepPath, stepName);
    };

    let threadId = execution.threadId ?? "";
    let callerGaveUp = false;
    try {
      await manifests.write(dispatch.orgId, manifest);
      if (threadId === "") {
        const input =
          resolvedInputs.get(prepared) ??
          (await adapt(dispatch.orgId, { ...dispatch, params: dispatch.params, selection: dispatch.selection })).input!;
        threadId = await ports.scripts.start(dispatch.orgId, action.template, input, {
          origin: "action",
          action_id: action.id,
          run_id: dispatch.runId,
        });
      }
      manifest.threadId = threadId;
      try {
        await execution.onThread?.(threadId);
      } catch (error) {
        // The caller gives the run up (a queue worker that lost its claim): not a run failure.
        callerGaveUp = true;
        throw error;
      }
      yield startedEvent(action.id, threadId, dispatch.runId, startedAtMs);

      let ended = false;
      for await (const report of ports.scripts.watch(dispatch.orgId, threadId, execution.signal)) {
        const progress = progressEvent(report, action.invoke);
        if (progress) yield progress;
        const failure = threadFailure(report);
        if (failure) {
          const status = failure.cancelled ? ActionRunStatus.CANCELLED : ActionRunStatus.FAILED;
          yield await fail(failure.error, failure.stepPath, failure.stepName, status);
          return;
        }
        if (report.kind === "completed") {
          ended = true;
          break;
        }
      }
      if (!ended) {
        execution.signal?.throwIfAborted();
        yield await fail("the run's thread ended without a result");
        return;
      }
      const output = await ports.scripts.output(dispatch.orgId, threadId);
      const routed = await routeOutput(ports, action, dispatch, output);
      const duration = finish(manifest, ActionRunStatus.COMPLETED, startedAtMs);
      manifest.outputKind = routed.kind;
      manifest.outputLocation = routed.location;
      await manifests.write(dispatch.orgId, manifest);
      yield completedEvent(routed.eventOutput, duration);
    } catch (error) {
      if (execution.signal?.aborted || callerGaveUp) throw error;
      if (!(error instanceof ConnectError) || error.code === Code.Internal || error.code === Code.Unknown)
        report(error, dispatch);
      yield await fail(publicMessage(error));
    }
  }

  function report(error: unknown, dispatch: ActionDispatch) {
    options.onError?.(error, { runId: dispatch.runId, actionId: dispatch.actionId, bucket: dispatch.bucket });
  }

  const runner: ActionRunner = {
    prepare,
    execute,
    async failDispatch(dispatch, error) {
      const startedAtMs = now();
      const manifest = manifestOf(dispatch, byId.get(dispatch.actionId), startedAtMs);
      finish(manifest, ActionRunStatus.FAILED, startedAtMs);
      manifest.error = error;
      await manifests.write(dispatch.orgId, manifest);
    },
  };
  return { runner, catalog, manifests };
}
