import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { ThreadStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { failure } from "../../../../test/connect-failure.js";
import {
  call,
  contextFor,
  EngineDouble,
  insertThread,
  openThreadTestKit,
  START_MS,
  type ThreadTestKit,
} from "./thread-test-kit.js";
import type { ThreadRow } from "./thread-store.js";

let kit: ThreadTestKit;
let orgId: string;
let otherOrg: string;
beforeAll(async () => {
  kit = await openThreadTestKit();
  orgId = await kit.database.createOrganization();
  otherOrg = await kit.database.createOrganization();
});
afterAll(() => kit.close());

const cancel = (thread: ThreadRow, reason = "", org = orgId) =>
  call(ScriptService.method.cancelThread, kit.methods.cancelThread, { threadId: thread.id, reason }, contextFor(org));
const resume = (thread: ThreadRow, stepInputOverrideJson = "") =>
  call(
    ScriptService.method.resumeThread,
    kit.methods.resumeThread,
    { threadId: thread.id, stepInputOverrideJson },
    contextFor(orgId),
  );

/** The kinds of the events a thread has, in order. */
async function kinds(thread: ThreadRow): Promise<string[]> {
  return (await kit.store.eventsAfter(thread.orgId, thread.id, 0)).map((event) => event.kind);
}

/** A thread the engine ran to a paused approval step at path 1. */
async function pausedThread(): Promise<ThreadRow> {
  const engine = new EngineDouble(kit, await insertThread(kit, orgId));
  await engine.start();
  await engine.stepStarted("0", { name: "prepare" });
  await engine.stepCompleted("0", { ok: true });
  await engine.stepStarted("1", { name: "approve", primitive: "approval" });
  await engine.pause("1");
  return engine.thread;
}

/** A thread whose step 0 failed. */
async function failedThread(patch: Partial<ThreadRow> = {}): Promise<ThreadRow> {
  const engine = new EngineDouble(kit, await insertThread(kit, orgId, patch));
  await engine.start();
  await engine.stepStarted("0", { name: "call", input: { n: 1 } });
  await engine.stepFailed("0", "tool said no");
  await engine.fail("tool said no", "0");
  return engine.thread;
}

describe("CancelThread", () => {
  it("cancels a PENDING thread at once, with its `cancelled` event and a wake-up for watchers", async () => {
    kit.clock.ms = START_MS + 5_000;
    const thread = await insertThread(kit, orgId);
    let woken = 0;
    const stop = kit.signals.onEvents(thread.id, () => woken++);
    expect((await cancel(thread, "not needed")).status).toBe(ThreadStatus.CANCELLED);
    stop();
    expect(woken).toBe(1);
    expect(await kit.store.get(orgId, thread.id)).toMatchObject({
      status: "cancelled",
      cancelRequested: true,
      cancelReason: "not needed",
      finishedAt: START_MS + 5_000,
    });
    const [event] = await kit.store.eventsAfter(thread.orgId, thread.id, 0);
    expect(event).toMatchObject({ kind: "cancelled", sequence: 1, payload: { reason: "not needed" } });
  });

  it("cancels a PAUSED thread at once and stops its paused step", async () => {
    const thread = await pausedThread();
    expect((await cancel(thread)).status).toBe(ThreadStatus.CANCELLED);
    expect((await kit.store.step(thread.orgId, thread.id, "1"))?.status).toBe("cancelled");
    expect((await kit.store.step(thread.orgId, thread.id, "0"))?.status).toBe("completed");
    const events = await kit.store.eventsAfter(thread.orgId, thread.id, 0);
    expect(events.at(-1)).toMatchObject({ kind: "cancelled", payload: { cancelledStepPath: "1" } });
  });

  it("asks the worker of a RUNNING thread to stop: CANCELLING, then repeat calls answer the status", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { runAfter: START_MS + 999_999 }));
    await engine.start();
    await engine.stepStarted("0", { name: "slow" });
    expect((await cancel(engine.thread, "too slow")).status).toBe(ThreadStatus.CANCELLING);
    expect(await kit.store.get(orgId, engine.thread.id)).toMatchObject({
      status: "cancelling",
      cancelRequested: true,
      cancelReason: "too slow",
      runAfter: 0,
    });
    expect(await kinds(engine.thread)).toEqual(["started", "stepStarted"]);
    expect((await cancel(engine.thread)).status).toBe(ThreadStatus.CANCELLING);
    // The worker ends the run.
    await kit.store.updateIfStatus(orgId, engine.thread.id, ["cancelling"], { status: "cancelled" });
    expect((await cancel(engine.thread)).status).toBe(ThreadStatus.CANCELLED);
  });

  it("leaves a PAUSED thread that a worker holds (its approval timed out) to the worker", async () => {
    const thread = await pausedThread();
    await kit.store.updateIfStatus(orgId, thread.id, ["paused"], {
      leaseOwner: "someone",
      leaseExpiresAt: kit.clock.ms + 30_000,
    });
    expect((await cancel(thread)).status).toBe(ThreadStatus.CANCELLING);
    expect((await kit.store.step(thread.orgId, thread.id, "1"))?.status).toBe("paused");
  });

  it("refuses to cancel a finished thread", async () => {
    const completed = new EngineDouble(kit, await insertThread(kit, orgId));
    await completed.start();
    await completed.complete({ done: true });
    const error = await failure(cancel(completed.thread));
    expect([error.code, error.rawMessage]).toEqual([
      Code.FailedPrecondition,
      `thread ${completed.thread.id} is THREAD_STATUS_COMPLETED: a finished thread cannot be cancelled`,
    ]);
    expect((await failure(cancel(await failedThread()))).code).toBe(Code.FailedPrecondition);
  });

  it("checks the reason and the organization", async () => {
    const thread = await insertThread(kit, orgId);
    expect((await failure(cancel(thread, "r".repeat(1025)))).rawMessage).toBe("reason is longer than 1024 characters");
    expect((await failure(cancel(thread, "", otherOrg))).code).toBe(Code.NotFound);
    expect((await kit.store.get(orgId, thread.id))?.status).toBe("pending");
  });
});

describe("ResumeThread", () => {
  it("queues a FAILED thread again with the step's new input, keeping what the engine needs", async () => {
    const thread = await failedThread();
    let woken = 0;
    const stop = kit.signals.onRunnable(() => woken++);
    expect((await resume(thread, '{"n": 2}')).status).toBe(ThreadStatus.PENDING);
    stop();
    expect(woken).toBe(1);
    expect(await kit.store.get(orgId, thread.id)).toMatchObject({
      status: "pending",
      error: "",
      finishedAt: 0,
      failedStepPath: "0",
      resumeOverride: { n: 2 },
      resumeCount: 1,
    });
    // A second call finds the thread PENDING.
    const again = await failure(resume(thread));
    expect([again.code, again.rawMessage]).toEqual([
      Code.FailedPrecondition,
      `thread ${thread.id} is THREAD_STATUS_PENDING: only a PAUSED or FAILED thread can be resumed`,
    ]);
  });

  it("resumes a PAUSED thread without an override", async () => {
    const thread = await pausedThread();
    expect((await resume(thread)).status).toBe(ThreadStatus.PENDING);
    expect(await kit.store.get(orgId, thread.id)).toMatchObject({
      status: "pending",
      resumeOverride: null,
      resumeCount: 1,
    });
  });

  it("gives a thread past its deadline a new one of the same length", async () => {
    kit.clock.ms = START_MS;
    const thread = await failedThread({ timeoutMs: 60_000, deadlineAt: START_MS + 60_000 });
    kit.clock.ms = START_MS + 120_000;
    await resume(thread);
    expect((await kit.store.get(orgId, thread.id))?.deadlineAt).toBe(START_MS + 180_000);
  });

  it("refuses threads that are not PAUSED or FAILED, naming the status", async () => {
    const running = new EngineDouble(kit, await insertThread(kit, orgId));
    await running.start();
    expect((await failure(resume(running.thread))).rawMessage).toMatch(
      /is THREAD_STATUS_RUNNING: only a PAUSED or FAILED/,
    );
    const cancelled = await insertThread(kit, orgId);
    await cancel(cancelled);
    expect((await failure(resume(cancelled))).code).toBe(Code.FailedPrecondition);
  });

  it("refuses an override that is not JSON, or is null", async () => {
    const thread = await failedThread();
    const error = await failure(resume(thread, "{oops"));
    expect([error.code, error.rawMessage.startsWith("step_input_override_json: is not valid JSON")]).toEqual([
      Code.InvalidArgument,
      true,
    ]);
    expect((await failure(resume(thread, "null"))).rawMessage).toMatch(/^step_input_override_json: null/);
    expect((await kit.store.get(orgId, thread.id))?.status).toBe("failed");
  });

  it("answers ABORTED while a worker holds the paused thread", async () => {
    const thread = await pausedThread();
    await kit.store.updateIfStatus(orgId, thread.id, ["paused"], {
      leaseOwner: "someone",
      leaseExpiresAt: kit.clock.ms + 30_000,
    });
    expect((await failure(resume(thread))).code).toBe(Code.Aborted);
  });
});
