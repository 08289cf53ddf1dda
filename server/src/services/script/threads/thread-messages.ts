import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  StepEventSchema,
  StepSnapshotSchema,
  ThreadEventSchema,
  type StepEvent,
  type StepSnapshot,
  type ThreadEvent,
} from "../../../../../gen/platform/script/v1/events_pb.js";
import {
  StepDetailSchema,
  StepStatus,
  StepSummarySchema,
  ThreadSchema,
  ThreadStatus,
  YieldedValueSchema,
  type StepDetail,
  type StepSummary,
  type Thread,
  type YieldedValue,
} from "../../../../../gen/platform/script/v1/thread_pb.js";
import type { StepStatus as StepStatusText, ThreadStatus as ThreadStatusText } from "../script-schema.js";
import { THREAD_EVENT_KINDS } from "./thread-events.js";
import type { EventRow, StepRow, ThreadHeader } from "./thread-store.js";

/**
 * Rows the engine writes (threads, thread_steps, thread_events) → the contract's messages. Pure
 * functions: the clock comes in as `now` wherever a time "so far" is reported.
 */

/** Samples (sample_input, sample_output, snapshot samples): the first 4 KB of the JSON bytes. */
export const SAMPLE_BYTES = 4096;

const THREAD_STATUS: Record<ThreadStatusText, ThreadStatus> = {
  pending: ThreadStatus.PENDING,
  running: ThreadStatus.RUNNING,
  paused: ThreadStatus.PAUSED,
  cancelling: ThreadStatus.CANCELLING,
  completed: ThreadStatus.COMPLETED,
  failed: ThreadStatus.FAILED,
  cancelled: ThreadStatus.CANCELLED,
};

// `waiting` (a timer inside the step) is RUNNING for clients: "executing, including waits inside the step".
const STEP_STATUS: Record<StepStatusText, StepStatus> = {
  running: StepStatus.RUNNING,
  waiting: StepStatus.RUNNING,
  paused: StepStatus.PAUSED,
  completed: StepStatus.COMPLETED,
  failed: StepStatus.FAILED,
  skipped: StepStatus.SKIPPED,
  cancelled: StepStatus.CANCELLED,
};

export function threadStatusOf(status: ThreadStatusText): ThreadStatus {
  return THREAD_STATUS[status] ?? ThreadStatus.UNSPECIFIED;
}

/** The database status of a ThreadStatus (a ListThreads filter); undefined for UNSPECIFIED or an unknown number. */
export function threadStatusText(status: ThreadStatus): ThreadStatusText | undefined {
  return (Object.keys(THREAD_STATUS) as ThreadStatusText[]).find((text) => THREAD_STATUS[text] === status);
}

export function stepStatusOf(status: StepStatusText): StepStatus {
  return STEP_STATUS[status] ?? StepStatus.UNSPECIFIED;
}

/** Step statuses after which the step does not change any more (until a resume re-runs it). */
export const FINISHED_STEP: ReadonlySet<StepStatusText> = new Set(["completed", "failed", "skipped", "cancelled"]);

const encoder = new TextEncoder();

/** The JSON bytes of a stored value; empty for none (SQL NULL). */
export function jsonBytes(value: unknown): Uint8Array {
  return value === null || value === undefined ? new Uint8Array(0) : encoder.encode(JSON.stringify(value));
}

/** Time between `startedAt` and `finishedAt` (or `now` while unfinished); 0 before the start. */
export function runTime(startedAt: number, finishedAt: number, now: number): number {
  if (startedAt === 0) return 0;
  return Math.max(0, (finishedAt === 0 ? now : finishedAt) - startedAt);
}

/**
 * Orders step paths as the step tree reads: by their numbers, parents before children
 * (`2` < `2.0.0` < `2.0.1` < `10`), rather than as text (`10` < `2`).
 */
export function comparePaths(a: string, b: string): number {
  const left = a.split(".").map(Number);
  const right = b.split(".").map(Number);
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const difference = (left[index] as number) - (right[index] as number);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

export function toThreadMessage(row: ThreadHeader, organizationName: string): Thread {
  return create(ThreadSchema, {
    threadId: row.id,
    scriptName: row.scriptName,
    scriptVersion: row.scriptVersion,
    status: threadStatusOf(row.status),
    currentStepPath: row.currentStepPath,
    totalSteps: row.totalSteps,
    currentStepName: row.currentStepName,
    metadata: { ...row.metadata },
    error: row.error,
    createdAtMs: BigInt(row.createdAt),
    startedAtMs: BigInt(row.startedAt),
    finishedAtMs: BigInt(row.finishedAt),
    organizationName,
    warnings: [...row.warnings],
  });
}

/** The columns of a step that a StepSummary needs. */
export type StepSummaryRow = Pick<
  StepRow,
  "stepPath" | "name" | "primitive" | "status" | "startedAt" | "finishedAt" | "parentPath"
>;

export function toStepSummary(row: StepSummaryRow, now: number): StepSummary {
  return create(StepSummarySchema, {
    stepPath: row.stepPath,
    name: row.name,
    primitive: row.primitive,
    status: stepStatusOf(row.status),
    durationMs: BigInt(runTime(row.startedAt, row.finishedAt, now)),
    parentPath: row.parentPath,
  });
}

/**
 * Everything recorded about a step, its input and output cut to `capBytes` each (4 MiB in
 * GetThreadResult, max_chunk_bytes in StreamStepResult) with the totals and truncation flags.
 * Diagnostics stay unset: the step rows keep nothing beyond `error` to report there.
 */
export function toStepDetail(row: StepRow, capBytes: number, now: number): StepDetail {
  const input = jsonBytes(row.input);
  const output = jsonBytes(row.output);
  return create(StepDetailSchema, {
    stepPath: row.stepPath,
    name: row.name,
    primitive: row.primitive,
    tool: row.tool,
    status: stepStatusOf(row.status),
    inputData: input.subarray(0, capBytes),
    outputData: output.subarray(0, capBytes),
    error: row.error,
    startedAtMs: BigInt(row.startedAt),
    finishedAtMs: BigInt(row.finishedAt),
    durationMs: BigInt(runTime(row.startedAt, row.finishedAt, now)),
    outputTotalBytes: BigInt(output.length),
    outputTruncated: output.length > capBytes,
    sampleInput: input.subarray(0, SAMPLE_BYTES),
    sampleOutput: output.subarray(0, SAMPLE_BYTES),
    inputTotalBytes: BigInt(input.length),
    inputTruncated: input.length > capBytes,
  });
}

/** WatchStep's first message: the step as recorded, or PENDING with what the script says of it. */
export function toStepSnapshot(row: StepRow | undefined, planned: { name: string; primitive: string }): StepSnapshot {
  if (row === undefined)
    return create(StepSnapshotSchema, { status: StepStatus.PENDING, name: planned.name, primitive: planned.primitive });
  return create(StepSnapshotSchema, {
    status: stepStatusOf(row.status),
    name: row.name,
    primitive: row.primitive,
    startedAtMs: BigInt(row.startedAt),
    sampleInput: jsonBytes(row.input).subarray(0, SAMPLE_BYTES),
    sampleOutput: jsonBytes(row.output).subarray(0, SAMPLE_BYTES),
  });
}

/**
 * The event kind in the ThreadEvent/StepEvent oneof spelling. The engine writes camelCase
 * (`stepStarted`); the snake_case of the schema comment (`step_started`) reads the same.
 */
export function eventKind(row: EventRow): string {
  return row.kind.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

const THREAD_EVENT_KIND_SET: ReadonlySet<string> = new Set(THREAD_EVENT_KINDS);
export const TERMINAL_EVENT_KINDS: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/**
 * A ThreadEvent from its row, or undefined for kinds that are not ThreadEvent variants (the
 * step-only `decision`). The payload is the variant's proto3 JSON, so the whole event is read as
 * proto3 JSON with the kind as its oneof member.
 */
export function toThreadEvent(row: EventRow): ThreadEvent | undefined {
  const kind = eventKind(row);
  if (!THREAD_EVENT_KIND_SET.has(kind)) return undefined;
  return readEvent(row, () =>
    fromJson(
      ThreadEventSchema,
      { threadId: row.threadId, timestampMs: String(row.createdAt), [kind]: row.payload as JsonValue },
      { ignoreUnknownFields: true },
    ),
  );
}

/** A StepEvent `decision` or `stepFailed` from its row (the other variants come from step rows). */
export function toStepEvent(row: EventRow): StepEvent | undefined {
  const kind = eventKind(row);
  if (kind !== "decision" && kind !== "stepFailed") return undefined;
  return readEvent(row, () =>
    fromJson(
      StepEventSchema,
      {
        threadId: row.threadId,
        stepPath: row.stepPath,
        timestampMs: String(row.createdAt),
        [kind]: row.payload as JsonValue,
      },
      { ignoreUnknownFields: true },
    ),
  );
}

/** StepEvent `done`: its duration and output size come from the step row, as recorded. */
export function toStepDone(event: EventRow, step: StepRow | undefined): StepEvent {
  const fallback = Number(event.payload.durationMs ?? 0);
  return create(StepEventSchema, {
    threadId: event.threadId,
    stepPath: event.stepPath,
    timestampMs: BigInt(event.createdAt),
    event: {
      case: "done",
      value: {
        durationMs: BigInt(
          step
            ? runTime(step.startedAt, step.finishedAt, event.createdAt)
            : Number.isSafeInteger(fallback)
              ? fallback
              : 0,
        ),
        outputBytes: BigInt(step ? jsonBytes(step.output).length : 0),
      },
    },
  });
}

/** A `yielded` event's value as a GetThreadResult `yielded_values` element. */
export function toYieldedValue(row: EventRow): YieldedValue {
  return readEvent(row, () => fromJson(YieldedValueSchema, row.payload as JsonValue, { ignoreUnknownFields: true }));
}

function readEvent<T>(row: EventRow, read: () => T): T {
  try {
    return read();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConnectError(
      `event ${row.sequence} (${row.kind}) of thread ${row.threadId} is not readable: ${reason}`,
      Code.Internal,
    );
  }
}
