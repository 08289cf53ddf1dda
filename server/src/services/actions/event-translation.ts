import { create } from "@bufbuild/protobuf";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ThreadProgress } from "./actions-ports.js";

/**
 * Thread events as ActionEvents: a `yielded` value becomes `progress` (its value when it is an
 * object, else `{value: x}`) for async actions only, since a sync action's stream goes from
 * started straight to its end; the thread's failure or cancellation becomes `failed`.
 */

export function startedEvent(actionId: string, threadId: string, runId: string, startedAtMs: number): ActionEvent {
  return create(ActionEventSchema, {
    event: { case: "started", value: { actionId, threadId, runId, startedAtMs: BigInt(startedAtMs) } },
  });
}

export function completedEvent(output: JsonObject, durationMs: number): ActionEvent {
  return create(ActionEventSchema, {
    event: { case: "completed", value: { output, durationMs: BigInt(Math.max(0, Math.round(durationMs))) } },
  });
}

export function failedEvent(error: string, failedStepPath = "", failedStepName = ""): ActionEvent {
  return create(ActionEventSchema, { event: { case: "failed", value: { error, failedStepPath, failedStepName } } });
}

/** The event a thread report becomes while the thread runs; undefined for reports the stream leaves out. */
export function progressEvent(report: ThreadProgress, invoke: "sync" | "async"): ActionEvent | undefined {
  if (report.kind !== "yielded" || invoke !== "async") return undefined;
  const value = report.value;
  const object: JsonObject = typeof value === "object" && value !== null && !Array.isArray(value) ? value : { value };
  return create(ActionEventSchema, {
    event: { case: "progress", value: { stepPath: report.stepPath, stepName: report.stepName, value: object } },
  });
}

/** How a thread that did not complete ended, as the `failed` event and the manifest record it. */
export function threadFailure(
  report: ThreadProgress,
): { error: string; stepPath: string; stepName: string; cancelled: boolean } | undefined {
  if (report.kind === "failed")
    return { error: report.error, stepPath: report.failedStepPath, stepName: report.failedStepName, cancelled: false };
  if (report.kind === "cancelled")
    return {
      error: report.reason === "" ? "the run was cancelled" : `the run was cancelled: ${report.reason}`,
      stepPath: report.stepPath,
      stepName: "",
      cancelled: true,
    };
  return undefined;
}
