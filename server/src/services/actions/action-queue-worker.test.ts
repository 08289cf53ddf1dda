import { create } from "@bufbuild/protobuf";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { SelectionSchema } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createActionQueueStore, type ActionQueueStore } from "./action-queue-store.js";
import { eventually, MemoryManifests, RunnerDouble, catalog, slowAction } from "./action-queue-test-kit.js";
import { createActionQueueWorker, type ActionQueueWorker } from "./action-queue-worker.js";
import { queueEntryOf } from "./queue-dispatch.js";
import { createRunEventHub } from "./queue-event-hub.js";
import { actionQueue } from "./queue-schema.js";

let database: TestDatabase;
let store: ActionQueueStore;
let orgA: string;
let orgB: string;
let manifests: MemoryManifests;
let runner: RunnerDouble;
const workers: ActionQueueWorker[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  store = createActionQueueStore(database.db);
  orgA = await database.createOrganization();
  orgB = await database.createOrganization();
});
afterAll(() => database.close());
beforeEach(async () => {
  await database.db.delete(actionQueue);
  manifests = new MemoryManifests();
  runner = new RunnerDouble(manifests);
});
afterEach(async () => {
  for (const gate of runner.gates.values()) gate.release();
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});

function startWorker(options: { leaseMs?: number; concurrency?: number; perOrganization?: number } = {}) {
  const worker = createActionQueueWorker({
    store,
    runner,
    catalog,
    hub: createRunEventHub(),
    pollMs: 50,
    leaseMs: options.leaseMs ?? 30_000,
    concurrency: options.concurrency ?? 8,
    perOrganization: options.perOrganization ?? 4,
  });
  workers.push(worker);
  worker.start();
  return worker;
}

async function enqueue(orgId: string, key = "a.txt", actionId = slowAction.id): Promise<string> {
  const selection = create(SelectionSchema, {
    shape: { case: "objectSingle", value: { bucket: "docs", key } },
  });
  const { dispatch } = await runner.prepare(orgId, { selection, actionId: slowAction.id, enqueuedAtMs: Date.now() });
  await store.enqueue([{ ...queueEntryOf(dispatch), actionId }]);
  return dispatch.runId;
}

it("runs a queued dispatch to its end once, recording its thread, and marks the row done", async () => {
  const runId = await enqueue(orgA);
  startWorker();
  await eventually(async () => (await store.get(orgA, runId))?.threadId === "thread-1");
  expect((await store.get(orgA, runId))?.status).toBe("running");
  runner.gate(runId).release();
  await eventually(async () => (await store.get(orgA, runId))?.status === "done");
  expect(runner.executed).toEqual([{ runId, threadId: undefined }]);
  expect(runner.failed).toEqual([]);
});

it("records a dispatch-time error as a FAILED run through the runner", async () => {
  const runId = await enqueue(orgA);
  runner.throwing.add(runId);
  startWorker();
  await eventually(async () => (await store.get(orgA, runId))?.status === "done");
  expect(runner.failed).toEqual([{ runId, error: "the script service is down" }]);
});

it("fails a run whose action is no longer offered without executing it", async () => {
  const runId = await enqueue(orgA, "a.txt", "retired_action");
  startWorker();
  await eventually(async () => (await store.get(orgA, runId))?.status === "done");
  expect(runner.executed).toEqual([]);
  expect(runner.failed).toEqual([{ runId, error: "action retired_action is no longer offered" }]);
});

it("takes over a run whose worker died once its lease lapsed, resuming its thread", async () => {
  const runId = await enqueue(orgA);
  // A worker of a process that then died: it claimed the run and recorded its thread.
  await store.claim("dead-worker", 300, 4, Date.now());
  await store.setThread(runId, "dead-worker", "thread-of-the-dead");
  runner.gate(runId).release();
  startWorker({ leaseMs: 300 });
  await eventually(async () => (await store.get(orgA, runId))?.status === "done");
  expect(runner.executed).toEqual([{ runId, threadId: "thread-of-the-dead" }]);
  expect((await store.get(orgA, runId))?.attempts).toBe(2);
});

it("lets go of a run another worker took over, and a stopping worker gives its runs back to be resumed", async () => {
  const runId = await enqueue(orgA);
  const first = startWorker({ leaseMs: 30_000 });
  await eventually(async () => (await store.get(orgA, runId))?.threadId === "thread-1");
  await first.stop();
  expect(runner.aborted).toEqual([runId]);
  // Given back: still running (its thread exists) but held by nobody, claimable at once.
  expect(await store.get(orgA, runId)).toMatchObject({ status: "running", leaseOwner: "", leaseExpiresAt: 0 });
  runner.gate(runId).release();
  startWorker();
  await eventually(async () => (await store.get(orgA, runId))?.status === "done");
  expect(runner.executed).toEqual([
    { runId, threadId: undefined },
    { runId, threadId: "thread-1" },
  ]);
});

it("stops a runner that ends with the abort as its error, and gives the run back", async () => {
  runner.throwOnAbort = true;
  const runId = await enqueue(orgA);
  const worker = startWorker();
  await eventually(async () => (await store.get(orgA, runId))?.threadId === "thread-1");
  await worker.stop();
  expect(runner.aborted).toEqual([runId]);
  expect(runner.failed).toEqual([]);
  expect(await store.get(orgA, runId)).toMatchObject({ status: "running", leaseOwner: "" });
});

it("stops executing when its lease is lost", async () => {
  const runId = await enqueue(orgA);
  startWorker({ leaseMs: 300 });
  await eventually(async () => (await store.get(orgA, runId))?.threadId === "thread-1");
  // Another process takes the row over (as after a long stall of this one).
  await database.db.update(actionQueue).set({ leaseOwner: "other" });
  await eventually(() => runner.aborted.includes(runId));
  expect((await store.get(orgA, runId))?.leaseOwner).toBe("other");
});

it("keeps each organization within its bound and runs another organization's single run beside a bulk", async () => {
  const bulk: string[] = [];
  for (let i = 0; i < 6; i++) bulk.push(await enqueue(orgA, `a${i}.txt`));
  startWorker({ concurrency: 8, perOrganization: 2 });
  await eventually(() => runner.executing === 2);
  const single = await enqueue(orgB, "b.txt");
  await eventually(() => runner.executing === 3);
  expect(runner.executed.map((run) => run.runId)).toContain(single);
  // Organization A's runs go two at a time.
  for (const runId of bulk) runner.gate(runId).release();
  runner.gate(single).release();
  await eventually(async () => (await store.listActive(orgA, "docs", 100)).length === 0);
  expect(runner.maxExecuting).toBe(3);
});

it("executes no more runs at once than its concurrency", async () => {
  for (let i = 0; i < 4; i++) await enqueue(orgA, `a${i}.txt`);
  for (let i = 0; i < 4; i++) await enqueue(orgB, `b${i}.txt`);
  startWorker({ concurrency: 3, perOrganization: 4 });
  await eventually(() => runner.executing === 3);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(runner.executing).toBe(3);
});
