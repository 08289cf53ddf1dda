import type { JsonObject, JsonValue } from "@bufbuild/protobuf";

/**
 * Every event a thread records is built here, one typed constructor per variant: the ThreadEvent
 * variants of WatchThread and the step-only `decision` of WatchStep. A row keeps the variant's
 * name as `kind` and its fields, in proto3 JSON (int64 as strings, bytes as base64), as `payload`,
 * which thread-messages.ts reads back into the wire message with the kind as the oneof member.
 */

/** The ThreadEvent variants, in the camelCase the rows use. */
export const THREAD_EVENT_KINDS = [
  "started",
  "stepStarted",
  "stepCompleted",
  "stepFailed",
  "completed",
  "failed",
  "cancelled",
  "yielded",
] as const;
/** Events recorded for WatchStep only. */
export const STEP_ONLY_EVENT_KINDS = ["decision"] as const;

export type ThreadEventKind = (typeof THREAD_EVENT_KINDS)[number] | (typeof STEP_ONLY_EVENT_KINDS)[number];

/** One event as the thread store writes it; `stepPath` is empty for events of the whole thread. */
export interface ThreadEventRecord {
  readonly kind: ThreadEventKind;
  readonly stepPath: string;
  readonly payload: JsonObject;
}

/** Which step an event is about. */
export interface StepRef {
  readonly stepPath: string;
  readonly name: string;
}

export const threadEvent = {
  /** ThreadStarted: the thread began; `totalSteps` is the top-level count. */
  started: (scriptName: string, totalSteps: number): ThreadEventRecord => ({
    kind: "started",
    stepPath: "",
    payload: { scriptName, totalSteps },
  }),

  /** StepStarted: `tool` is set for steps that call one (execute), empty otherwise. */
  stepStarted: (step: StepRef & { readonly primitive: string; readonly tool: string }): ThreadEventRecord => ({
    kind: "stepStarted",
    stepPath: step.stepPath,
    payload: { stepPath: step.stepPath, name: step.name, primitive: step.primitive, tool: step.tool },
  }),

  stepCompleted: (step: StepRef, durationMs: number): ThreadEventRecord => ({
    kind: "stepCompleted",
    stepPath: step.stepPath,
    payload: { stepPath: step.stepPath, name: step.name, durationMs: String(durationMs) },
  }),

  stepFailed: (step: StepRef, error: string): ThreadEventRecord => ({
    kind: "stepFailed",
    stepPath: step.stepPath,
    payload: { stepPath: step.stepPath, name: step.name, error },
  }),

  /** ThreadCompleted: `stepsExecuted` counts the completed steps of every level. */
  completed: (durationMs: number, stepsExecuted: number): ThreadEventRecord => ({
    kind: "completed",
    stepPath: "",
    payload: { durationMs: String(durationMs), stepsExecuted },
  }),

  /** ThreadFailed: the step at fault, or empty path and name when none was (a deadline between steps). */
  failed: (error: string, failedStep: StepRef): ThreadEventRecord => ({
    kind: "failed",
    stepPath: "",
    payload: { error, failedStepPath: failedStep.stepPath, failedStepName: failedStep.name },
  }),

  /** ThreadCancelled: the step that was running, or an empty path when none was. */
  cancelled: (reason: string, cancelledStepPath: string): ThreadEventRecord => ({
    kind: "cancelled",
    stepPath: "",
    payload: { reason, cancelledStepPath },
  }),

  /** YieldedValue: `value` is sent JSON-encoded; `sequence` counts the thread's yields from 1. */
  yielded: (step: StepRef, value: JsonValue, sequence: number, timestampMs: number): ThreadEventRecord => ({
    kind: "yielded",
    stepPath: step.stepPath,
    payload: {
      stepPath: step.stepPath,
      name: step.name,
      valueData: Buffer.from(JSON.stringify(value)).toString("base64"),
      sequence,
      timestampMs: String(timestampMs),
    },
  }),

  /** StepDecision (WatchStep only): how a decide step chose its branch. */
  decision: (
    stepPath: string,
    decision: { readonly strategy: "rule" | "llm"; readonly chosenBranch: string; readonly reasoning: string },
  ): ThreadEventRecord => ({
    kind: "decision",
    stepPath,
    payload: { strategy: decision.strategy, chosenBranch: decision.chosenBranch, reasoning: decision.reasoning },
  }),
};
