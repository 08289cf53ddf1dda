import { afterAll, beforeAll, expect, it } from "vitest";
import { threadEvent } from "./thread-events.js";
import { EngineDouble, insertThread, openThreadTestKit, type ThreadTestKit } from "./thread-test-kit.js";

// A thread's input and output can be tens of megabytes; the API's reads of a thread (GetThread,
// ListThreads, watches, cancel and resume) leave them out, the result methods read the output
// alone, and the worker counts completed steps without reading their data.
let kit: ThreadTestKit;
let orgId: string;
let otherOrg: string;
beforeAll(async () => {
  kit = await openThreadTestKit();
  orgId = await kit.database.createOrganization();
  otherOrg = await kit.database.createOrganization();
});
afterAll(() => kit.close());

it("reads a thread without its input and output, and its output alone within its organization", async () => {
  const output = { text: "y".repeat(100_000) };
  const engine = new EngineDouble(
    kit,
    await insertThread(kit, orgId, { input: { text: "x".repeat(100_000) }, metadata: { team: "a" } }),
  );
  await engine.start();
  await engine.complete(output, 0);
  const { id } = engine.thread;

  const header = await kit.store.getHeader(orgId, id);
  expect(header).toMatchObject({ id, orgId, status: "completed", metadata: { team: "a" } });
  expect(header).not.toHaveProperty("input");
  expect(header).not.toHaveProperty("output");
  const [listed] = await kit.store.list(orgId, { limit: 1 });
  expect(listed).toEqual(header);

  expect(await kit.store.output(orgId, id)).toEqual(output);
  expect(await kit.store.output(otherOrg, id)).toBeNull();
  expect(await kit.store.getHeader(otherOrg, id)).toBeUndefined();
});

it("answers null for the output of a thread that has not completed", async () => {
  const thread = await insertThread(kit, orgId);
  expect(await kit.store.output(orgId, thread.id)).toBeNull();
});

it("counts a thread's completed steps", async () => {
  const engine = new EngineDouble(kit, await insertThread(kit, orgId));
  await engine.start();
  await engine.stepStarted("0", { name: "a" });
  await engine.stepCompleted("0", { big: "z".repeat(10_000) });
  await engine.stepStarted("1", { name: "b" });
  await engine.stepFailed("1", "boom");
  await engine.stepStarted("2", { name: "c" });
  expect(await kit.store.completedStepCount(orgId, engine.thread.id)).toBe(1);
  await engine.stepCompleted("2", null);
  expect(await kit.store.completedStepCount(orgId, engine.thread.id)).toBe(2);
});

it("reads nothing of a thread through another organization, and writes no event or yield to it", async () => {
  const engine = new EngineDouble(kit, await insertThread(kit, orgId));
  await engine.start();
  await engine.stepStarted("0", { name: "a", input: { secret: "input" } });
  await engine.stepCompleted("0", { secret: "output" });
  await engine.yielded("1", { secret: "yield" });
  await kit.store.updateIfStatus(orgId, engine.thread.id, ["running"], { cancelRequested: true, cancelReason: "why" });
  const { id } = engine.thread;

  // Within its organization, every read sees the thread...
  expect(await kit.store.steps(orgId, id)).toHaveLength(1);
  expect(await kit.store.step(orgId, id, "0")).toMatchObject({ output: { secret: "output" } });
  expect(await kit.store.completedStepCount(orgId, id)).toBe(1);
  expect(await kit.store.eventsAfter(orgId, id, 0)).toHaveLength(4);
  expect(await kit.store.cancelRequested(orgId, id)).toEqual({ requested: true, reason: "why", currentStepPath: "0" });

  // ...and through another one, none does.
  expect(await kit.store.get(otherOrg, id)).toBeUndefined();
  expect(await kit.store.steps(otherOrg, id)).toEqual([]);
  expect(await kit.store.step(otherOrg, id, "0")).toBeUndefined();
  expect(await kit.store.completedStepCount(otherOrg, id)).toBe(0);
  expect(await kit.store.eventsAfter(otherOrg, id, 0)).toEqual([]);
  expect(await kit.store.cancelRequested(otherOrg, id)).toEqual({ requested: false, reason: "", currentStepPath: "" });
  await expect(kit.store.nextYieldSequence(otherOrg, id)).rejects.toThrow(/no thread/);
  await expect(kit.store.appendEvent(otherOrg, id, threadEvent.cancelled("", ""))).rejects.toThrow(/no thread/);
  expect(await kit.store.nextYieldSequence(orgId, id)).toBe(2);
  expect(await kit.store.eventsAfter(orgId, id, 0)).toHaveLength(4);
});

it("stores values holding NUL, and strings of digits, and reads them back as they were", async () => {
  const nul = { text: "x\u0000y", "k\u0000": ["\u0000"] };
  const thread = await insertThread(kit, orgId, {
    input: nul,
    status: "running",
    leaseOwner: "nul-worker",
    leaseExpiresAt: Date.now() + 3_600_000,
  });
  const step = {
    orgId,
    threadId: thread.id,
    stepPath: "0",
    stepId: "s",
    name: "s",
    primitive: "execute",
    tool: "t",
    parentPath: "",
    input: nul,
    startedAt: 1,
  };
  expect(
    await kit.store.beginStep("nul-worker", step, { ...threadEvent.stepStarted({ ...step, tool: "t" }), at: 1 }),
  ).toBe("started");
  const end = {
    orgId,
    threadId: thread.id,
    stepPath: "0",
    status: "completed" as const,
    output: "123",
    error: "",
    finishedAt: 2,
  };
  expect(await kit.store.finishStep("nul-worker", end, { ...threadEvent.stepCompleted(step, 1), at: 2 })).toBe(true);
  await kit.store.saveStep({ ...step, stepPath: "1", status: "completed", output: nul }, "nul-worker");
  await kit.store.appendEvent(orgId, thread.id, threadEvent.yielded(step, nul, 1, 3));
  await kit.store.appendEvent(orgId, thread.id, threadEvent.stepFailed(step, "bad \u0000 byte"));
  await kit.store.update(thread.id, "nul-worker", { resumeOverride: nul, warnings: ["output/k\u0000: is required"] });
  expect(
    await kit.store.endRun(
      thread.id,
      "nul-worker",
      { status: "completed", output: nul },
      { ...threadEvent.completed(3, 2), at: 3 },
    ),
  ).toBe(true);

  expect(await kit.store.get(orgId, thread.id)).toMatchObject({
    input: nul,
    output: nul,
    resumeOverride: nul,
    warnings: ["output/k\u0000: is required"],
  });
  expect(await kit.store.output(orgId, thread.id)).toEqual(nul);
  expect(await kit.store.step(orgId, thread.id, "0")).toMatchObject({ input: nul, output: "123" });
  expect(await kit.store.step(orgId, thread.id, "1")).toMatchObject({ output: nul });
  const events = await kit.store.eventsAfter(orgId, thread.id, 0);
  expect(events.find((event) => event.kind === "stepFailed")?.payload).toEqual({
    stepPath: "0",
    name: "s",
    error: "bad \u0000 byte",
  });
});
