import { toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { StepEventSchema, ThreadEventSchema } from "../../../../../gen/platform/script/v1/events_pb.js";
import { THREAD_EVENT_KINDS, threadEvent, type ThreadEventRecord } from "./thread-events.js";
import { toStepEvent, toThreadEvent } from "./thread-messages.js";
import type { EventRow } from "./thread-store.js";

// The stored payload of every variant is pinned: rows written before stay readable, and a watcher
// gets the same ThreadEvent (or StepEvent) whichever part of the engine recorded it.
const row = (event: ThreadEventRecord): EventRow => ({
  threadId: "t-1",
  sequence: 7,
  orgId: "o-1",
  createdAt: 1_700_000_000_123,
  ...event,
});
const wire = (event: ThreadEventRecord) => toJson(ThreadEventSchema, toThreadEvent(row(event))!);
const step = { stepPath: "1.0.2", name: "fetch ticket" };

describe("thread events", () => {
  it.each([
    ["started", threadEvent.started("triage", 3), "", { scriptName: "triage", totalSteps: 3 }],
    [
      "stepStarted",
      threadEvent.stepStarted({ ...step, primitive: "execute", tool: "crm.get" }),
      "1.0.2",
      { stepPath: "1.0.2", name: "fetch ticket", primitive: "execute", tool: "crm.get" },
    ],
    [
      "stepCompleted",
      threadEvent.stepCompleted(step, 250),
      "1.0.2",
      { stepPath: "1.0.2", name: "fetch ticket", durationMs: "250" },
    ],
    [
      "stepFailed",
      threadEvent.stepFailed(step, "boom"),
      "1.0.2",
      { stepPath: "1.0.2", name: "fetch ticket", error: "boom" },
    ],
    ["completed", threadEvent.completed(1200, 8), "", { durationMs: "1200", stepsExecuted: 8 }],
    [
      "failed",
      threadEvent.failed("boom", step),
      "",
      { error: "boom", failedStepPath: "1.0.2", failedStepName: "fetch ticket" },
    ],
    ["cancelled", threadEvent.cancelled("", ""), "", { reason: "", cancelledStepPath: "" }],
    [
      "yielded",
      threadEvent.yielded(step, { done: 2 }, 4, 1_700_000_000_000),
      "1.0.2",
      {
        stepPath: "1.0.2",
        name: "fetch ticket",
        valueData: "eyJkb25lIjoyfQ==",
        sequence: 4,
        timestampMs: "1700000000000",
      },
    ],
  ])("stores %s as the variant's fields, which a watcher reads as that variant", (kind, event, stepPath, payload) => {
    expect(event).toEqual({ kind, stepPath, payload });
    expect(wire(event)).toEqual({ threadId: "t-1", timestampMs: "1700000000123", [kind]: expect.anything() });
  });

  it("reads every field back", () => {
    expect(wire(threadEvent.stepStarted({ ...step, primitive: "decide", tool: "" }))).toEqual({
      threadId: "t-1",
      timestampMs: "1700000000123",
      stepStarted: { stepPath: "1.0.2", name: "fetch ticket", primitive: "decide" },
    });
    expect(wire(threadEvent.yielded(step, null, 1, 5))).toEqual({
      threadId: "t-1",
      timestampMs: "1700000000123",
      yielded: { stepPath: "1.0.2", name: "fetch ticket", valueData: "bnVsbA==", sequence: "1", timestampMs: "5" },
    });
    expect(wire(threadEvent.failed("deadline", { stepPath: "", name: "" }))).toEqual({
      threadId: "t-1",
      timestampMs: "1700000000123",
      failed: { error: "deadline" },
    });
  });

  it("has a constructor for every ThreadEvent variant", () => {
    const variants = ThreadEventSchema.oneofs[0]!.fields.map((field) => field.localName).sort();
    expect([...THREAD_EVENT_KINDS].sort()).toEqual(variants);
    expect(
      Object.keys(threadEvent)
        .filter((name) => name !== "decision")
        .sort(),
    ).toEqual(variants);
  });

  it("records a decision for WatchStep only", () => {
    const event = threadEvent.decision("2", { strategy: "llm", chosenBranch: "urgent", reasoning: "the site is down" });
    expect(event).toEqual({
      kind: "decision",
      stepPath: "2",
      payload: { strategy: "llm", chosenBranch: "urgent", reasoning: "the site is down" },
    });
    expect(toThreadEvent(row(event))).toBeUndefined();
    expect(toJson(StepEventSchema, toStepEvent(row(event))!)).toEqual({
      threadId: "t-1",
      stepPath: "2",
      timestampMs: "1700000000123",
      decision: { strategy: "llm", chosenBranch: "urgent", reasoning: "the site is down" },
    });
  });
});
