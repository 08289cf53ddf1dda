import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { StepStatus, ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import {
  comparePaths,
  jsonBytes,
  runTime,
  SAMPLE_BYTES,
  stepStatusOf,
  threadStatusOf,
  threadStatusText,
  toStepDetail,
  toStepDone,
  toStepEvent,
  toStepSnapshot,
  toStepSummary,
  toThreadEvent,
  toThreadMessage,
  toYieldedValue,
} from "./thread-messages.js";
import type { EventRow, StepRow, ThreadRow } from "./thread-store.js";

const THREAD_ID = "0b9a4c0e-5f1d-4c52-9a51-1f1d2a3b4c5d";

function stepRow(patch: Partial<StepRow> = {}): StepRow {
  return {
    threadId: THREAD_ID,
    stepPath: "1.0.2",
    orgId: "org",
    stepId: "fetch",
    name: "Fetch",
    primitive: "execute",
    tool: "http.request",
    parentPath: "1",
    status: "completed",
    input: { url: "https://example.com" },
    output: { status: 200 },
    error: "",
    attempt: 1,
    wakeAt: 0,
    startedAt: 1_000,
    finishedAt: 1_250,
    ...patch,
  };
}

function eventRow(kind: string, payload: Record<string, unknown>, stepPath = ""): EventRow {
  return { threadId: THREAD_ID, sequence: 7, orgId: "org", stepPath, kind, payload, createdAt: 5_000 };
}

describe("statuses", () => {
  it("maps every thread status and back", () => {
    for (const text of ["pending", "running", "paused", "cancelling", "completed", "failed", "cancelled"] as const) {
      const status = threadStatusOf(text);
      expect(ThreadStatus[status]).toBe(text.toUpperCase());
      expect(threadStatusText(status)).toBe(text);
    }
    expect(threadStatusText(ThreadStatus.UNSPECIFIED)).toBeUndefined();
    expect(threadStatusText(99 as ThreadStatus)).toBeUndefined();
  });

  it("reports a waiting step as RUNNING", () => {
    expect(stepStatusOf("waiting")).toBe(StepStatus.RUNNING);
    expect(stepStatusOf("skipped")).toBe(StepStatus.SKIPPED);
  });
});

describe("comparePaths", () => {
  it("orders by numbers, parents before children", () => {
    const paths = ["10", "2.0.1", "2", "1", "2.0.0", "2.1.0", "2.0.10", "2.0.2"];
    expect(paths.sort(comparePaths)).toEqual(["1", "2", "2.0.0", "2.0.1", "2.0.2", "2.0.10", "2.1.0", "10"]);
  });
});

describe("row messages", () => {
  it("builds a Thread with the organization name and bigint times", () => {
    const row = {
      id: THREAD_ID,
      scriptName: "demo",
      scriptVersion: 3,
      status: "running",
      currentStepPath: "1",
      currentStepName: "b",
      totalSteps: 4,
      metadata: { team: "a" },
      error: "",
      createdAt: 10,
      startedAt: 20,
      finishedAt: 0,
      warnings: ["output/x: must be string"],
    } as unknown as ThreadRow;
    const thread = toThreadMessage(row, "acme");
    expect(thread).toMatchObject({
      threadId: THREAD_ID,
      scriptVersion: 3,
      status: ThreadStatus.RUNNING,
      totalSteps: 4,
      metadata: { team: "a" },
      createdAtMs: 10n,
      startedAtMs: 20n,
      finishedAtMs: 0n,
      organizationName: "acme",
      warnings: ["output/x: must be string"],
    });
  });

  it("reports a step's run time so far while it runs", () => {
    expect(toStepSummary(stepRow({ status: "running", finishedAt: 0 }), 1_900).durationMs).toBe(900n);
    expect(toStepSummary(stepRow(), 9_999)).toMatchObject({
      stepPath: "1.0.2",
      parentPath: "1",
      status: StepStatus.COMPLETED,
      durationMs: 250n,
    });
    expect(runTime(0, 0, 5)).toBe(0);
  });

  it("cuts input and output to the cap and samples the first 4 KB", () => {
    const big = { text: "x".repeat(10_000) };
    const detail = toStepDetail(stepRow({ input: big, output: big }), 6_000, 2_000);
    const whole = jsonBytes(big);
    expect(detail.outputData).toEqual(whole.subarray(0, 6_000));
    expect(detail.inputData.length).toBe(6_000);
    expect(detail).toMatchObject({
      outputTotalBytes: BigInt(whole.length),
      outputTruncated: true,
      inputTotalBytes: BigInt(whole.length),
      inputTruncated: true,
      tool: "http.request",
    });
    expect(detail.sampleInput).toEqual(whole.subarray(0, SAMPLE_BYTES));
    expect(detail.sampleOutput.length).toBe(SAMPLE_BYTES);
    expect(detail.diagnostics).toBeUndefined();

    const small = toStepDetail(stepRow({ output: null }), 6_000, 2_000);
    expect(small).toMatchObject({ outputTotalBytes: 0n, outputTruncated: false, inputTruncated: false });
    expect(small.outputData.length).toBe(0);
  });

  it("snapshots a recorded step, or a PENDING one from the plan", () => {
    expect(toStepSnapshot(undefined, { name: "Later", primitive: "decide" })).toMatchObject({
      status: StepStatus.PENDING,
      name: "Later",
      primitive: "decide",
      startedAtMs: 0n,
    });
    const snapshot = toStepSnapshot(stepRow({ status: "waiting" }), { name: "", primitive: "" });
    expect(snapshot).toMatchObject({ status: StepStatus.RUNNING, name: "Fetch", startedAtMs: 1_000n });
    expect(new TextDecoder().decode(snapshot.sampleOutput)).toBe('{"status":200}');
  });
});

describe("event rows", () => {
  it("reads each ThreadEvent variant from its proto3 JSON payload", () => {
    const started = toThreadEvent(
      eventRow("stepStarted", { stepPath: "0", name: "a", primitive: "execute", tool: "t" }, "0"),
    );
    expect(started).toMatchObject({
      threadId: THREAD_ID,
      timestampMs: 5_000n,
      event: { case: "stepStarted", value: { stepPath: "0", name: "a", tool: "t" } },
    });
    const completed = toThreadEvent(eventRow("completed", { durationMs: "1500", stepsExecuted: 3 }));
    expect(completed?.event).toMatchObject({ case: "completed", value: { durationMs: 1500n, stepsExecuted: 3 } });
    const yielded = toThreadEvent(
      eventRow("yielded", {
        stepPath: "1",
        name: "y",
        valueData: Buffer.from("[1,2]").toString("base64"),
        sequence: 4,
        timestampMs: "77",
      }),
    );
    expect(yielded?.event.case).toBe("yielded");
    expect(
      new TextDecoder().decode(yielded?.event.case === "yielded" ? yielded.event.value.valueData : new Uint8Array()),
    ).toBe("[1,2]");
  });

  it("accepts the snake_case kind spelling and skips step-only kinds", () => {
    expect(toThreadEvent(eventRow("step_failed", { stepPath: "0", name: "a", error: "boom" }))?.event).toMatchObject({
      case: "stepFailed",
      value: { error: "boom" },
    });
    expect(toThreadEvent(eventRow("decision", { strategy: "rule", chosenBranch: "b" }))).toBeUndefined();
  });

  it("fails loudly on a payload that does not read", () => {
    expect(() => toThreadEvent(eventRow("completed", { durationMs: "soon" }))).toThrow(ConnectError);
  });

  it("reads StepEvents: decision and stepFailed from the payload, done from the row", () => {
    expect(
      toStepEvent(eventRow("decision", { strategy: "llm", chosenBranch: "refund", reasoning: "asked" }, "2")),
    ).toMatchObject({
      stepPath: "2",
      event: { case: "decision", value: { strategy: "llm", chosenBranch: "refund", reasoning: "asked" } },
    });
    expect(toStepEvent(eventRow("stepFailed", { stepPath: "2", name: "n", error: "e" }, "2"))?.event.case).toBe(
      "stepFailed",
    );
    expect(toStepEvent(eventRow("stepStarted", {}, "2"))).toBeUndefined();
    const done = toStepDone(eventRow("stepCompleted", { durationMs: "5" }, "1.0.2"), stepRow());
    expect(done.event).toMatchObject({
      case: "done",
      value: { durationMs: 250n, outputBytes: BigInt('{"status":200}'.length) },
    });
  });

  it("reads a yielded value", () => {
    const value = toYieldedValue(
      eventRow("yielded", {
        stepPath: "3",
        name: "y",
        valueData: Buffer.from('"hi"').toString("base64"),
        sequence: 2,
        timestampMs: "9",
      }),
    );
    expect(value).toMatchObject({ stepPath: "3", sequence: 2n, timestampMs: 9n });
  });
});
