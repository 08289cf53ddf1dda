import { create, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import { ActionRunStatus, ActiveRunPhase } from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import {
  EnqueueActionRequestSchema,
  EnqueueBulkActionsRequestSchema,
  ListActiveRunsRequestSchema,
  WatchActionRunRequestSchema,
} from "../../../../gen/platform/data/actions/v1/actions_service_pb.js";
import { SelectionSchema } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createActionQueue, type ActionQueue } from "./action-queue.js";
import { createActionQueueStore } from "./action-queue-store.js";
import {
  catalog,
  contextOf,
  eventually,
  MemoryManifests,
  MemoryThreads,
  RunnerDouble,
  slowAction,
} from "./action-queue-test-kit.js";
import { manifestKey } from "./run-keys.js";
import { actionQueue } from "./queue-schema.js";

let database: TestDatabase;
let orgA: string;
let orgB: string;
let manifests: MemoryManifests;
let threads: MemoryThreads;
let runner: RunnerDouble;
const queues: ActionQueue[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  orgA = await database.createOrganization();
  orgB = await database.createOrganization();
});
afterAll(() => database.close());
beforeEach(async () => {
  await database.db.delete(actionQueue);
  manifests = new MemoryManifests();
  threads = new MemoryThreads();
  runner = new RunnerDouble(manifests, threads);
});
afterEach(async () => {
  for (const gate of runner.gates.values()) gate.release();
  await Promise.all(queues.splice(0).map((queue) => queue.stop()));
});

/** A process's queue: its handlers, and its worker when `start`. */
function queueOf(start: boolean): ActionQueue {
  const queue = createActionQueue({
    db: database.db,
    runner,
    catalog,
    // Organization A has bucket docs; B has a bucket of the same name, and nothing is shared.
    buckets: { exists: async (orgId, bucket) => bucket === "docs" && (orgId === orgA || orgId === orgB) },
    manifests,
    threads,
    pollMs: 50,
  });
  queues.push(queue);
  if (start) queue.start();
  return queue;
}

const selection = (key: string) =>
  create(SelectionSchema, { shape: { case: "objectSingle", value: { bucket: "docs", key } } });

async function collect(events: AsyncIterable<ActionEvent>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const event of events) out.push(toJson(ActionEventSchema, event));
  return out;
}

async function enqueue(queue: ActionQueue, key = "a.txt", params = { n: 1 }) {
  return queue.handlers.enqueueAction(
    create(EnqueueActionRequestSchema, { selection: selection(key), actionId: slowAction.id, params, batchId: "b-1" }),
    contextOf(orgA),
  );
}

function watch(queue: ActionQueue, orgId: string, runId: string, signal?: AbortSignal, bucket = "docs") {
  return queue.handlers.watchActionRun(
    create(WatchActionRunRequestSchema, { runId, bucket }),
    contextOf(orgId, signal),
  );
}

async function codeOf(work: () => Promise<unknown>): Promise<Code | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    return ConnectError.from(error).code;
  }
}

it("enqueues a run and streams its live events to a watcher of the process running it", async () => {
  const queue = queueOf(true);
  const { runId, reverseTs, batchId } = await enqueue(queue);
  expect(reverseTs).toMatch(/^\d{13}$/);
  expect(batchId).toBe("b-1");
  const expected = [
    { started: { actionId: slowAction.id, threadId: "thread-1", runId, startedAtMs: "1000" } },
    { progress: { stepPath: "0", stepName: "tick", value: { step: 1 } } },
    { completed: { output: { echoed: { n: 1 } }, durationMs: "5" } },
  ];
  const stream = watch(queue, orgA, runId)[Symbol.asyncIterator]();
  expect(toJson(ActionEventSchema, (await stream.next()).value!)).toEqual(expected[0]);
  runner.gate(runId).release();
  expect(await collect({ [Symbol.asyncIterator]: () => stream })).toEqual(expected.slice(1));
  // Just after the end, a watcher of this process still gets the run's own events.
  expect(await collect(watch(queue, orgA, runId))).toEqual(expected);
});

it("answers the adaptation errors of EnqueueAction synchronously and enqueues nothing", async () => {
  const queue = queueOf(false);
  expect(await codeOf(() => enqueue(queue, "missing.txt"))).toBe(Code.NotFound);
  expect(await codeOf(() => enqueue(queue, "a.txt", { bad: 1 } as never))).toBe(Code.InvalidArgument);
  expect(await database.db.select().from(actionQueue)).toEqual([]);
});

it("enqueues a bulk with per-slot errors aligned with the run ids, listed as active runs of one batch", async () => {
  const queue = queueOf(false);
  const response = await queue.handlers.enqueueBulkActions(
    create(EnqueueBulkActionsRequestSchema, {
      selections: [selection("a.txt"), selection("missing.txt"), selection("c.txt")],
      actionId: slowAction.id,
      params: { n: 2 },
    }),
    contextOf(orgA),
  );
  expect(response.batchId).toMatch(/^[0-9a-f-]{36}$/);
  expect(response.runIds).toHaveLength(3);
  expect(response.runIds[1]).toBe("");
  expect(response.runIds[0]).not.toBe("");
  expect(response.errors).toEqual(["", "object missing.txt not found", ""]);

  const { runs } = await queue.handlers.listActiveRuns(
    create(ListActiveRunsRequestSchema, { bucket: "docs" }),
    contextOf(orgA),
  );
  expect(runs.map((run) => [run.runId, run.selectionLabel, run.batchId, run.phase])).toEqual([
    [response.runIds[0], "a.txt", response.batchId, ActiveRunPhase.QUEUED],
    [response.runIds[2], "c.txt", response.batchId, ActiveRunPhase.QUEUED],
  ]);
  expect(runs[0]!.startedAtMs).toBe(0n);
  // Another organization's bucket of the same name shows none of them.
  const other = await queue.handlers.listActiveRuns(
    create(ListActiveRunsRequestSchema, { bucket: "docs" }),
    contextOf(orgB),
  );
  expect(other.runs).toEqual([]);
  expect(
    await codeOf(async () =>
      queue.handlers.listActiveRuns(create(ListActiveRunsRequestSchema, { bucket: "nope" }), contextOf(orgA)),
    ),
  ).toBe(Code.NotFound);
});

it("shows a running run as RUNNING with its start and thread", async () => {
  const queue = queueOf(true);
  const { runId } = await enqueue(queue);
  await eventually(() => runner.executing === 1);
  await eventually(async () => (await createActionQueueStore(database.db).get(orgA, runId))?.threadId !== "");
  const { runs } = await queue.handlers.listActiveRuns(
    create(ListActiveRunsRequestSchema, { bucket: "docs" }),
    contextOf(orgA),
  );
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ runId, phase: ActiveRunPhase.RUNNING, threadId: "thread-1" });
  expect(runs[0]!.startedAtMs).toBeGreaterThan(0n);
});

it("fails a whole bulk, enqueueing nothing, for a problem every slot shares", async () => {
  const queue = queueOf(false);
  const bulk = (fields: Record<string, unknown>) =>
    codeOf(async () =>
      queue.handlers.enqueueBulkActions(
        create(EnqueueBulkActionsRequestSchema, {
          selections: [selection("a.txt")],
          actionId: slowAction.id,
          ...fields,
        }),
        contextOf(orgA),
      ),
    );
  expect(await bulk({ params: { bad: 1 } })).toBe(Code.InvalidArgument);
  expect(await bulk({ actionId: "no_such_action" })).toBe(Code.NotFound);
  expect(await bulk({ actionId: "" })).toBe(Code.InvalidArgument);
  expect(await bulk({ selections: [] })).toBe(Code.InvalidArgument);
  expect(await bulk({ selections: Array.from({ length: 1001 }, () => selection("a.txt")) })).toBe(Code.InvalidArgument);
  expect(await database.db.select().from(actionQueue)).toEqual([]);
});

it("follows a run that another process executes through the database, and replays it once ended", async () => {
  const watcherProcess = queueOf(false);
  const workerProcess = queueOf(true);
  const { runId } = await enqueue(workerProcess);
  const events = collect(watch(watcherProcess, orgA, runId));
  await eventually(() => runner.executing === 1);
  runner.gate(runId).release();
  const expected = [
    { started: { actionId: slowAction.id, threadId: "thread-1", runId, startedAtMs: expect.any(String) } },
    { progress: { stepPath: "0", stepName: "tick", value: { step: 1 } } },
    { completed: { output: { value: "echo" }, durationMs: "5" } },
  ];
  expect(await events).toEqual(expected);
  // Ended: the manifest tells how it went, the thread what it yielded.
  expect(await collect(watch(watcherProcess, orgA, runId))).toEqual([
    { started: { actionId: slowAction.id, threadId: "thread-1", runId, startedAtMs: "1000" } },
    expected[1],
    expected[2],
  ]);
});

it("does not cancel a run when its watcher goes away", async () => {
  const queue = queueOf(true);
  const { runId } = await enqueue(queue);
  const closing = new AbortController();
  const stream = watch(queue, orgA, runId, closing.signal)[Symbol.asyncIterator]();
  expect((await stream.next()).value?.event.case).toBe("started");
  closing.abort();
  await stream.return?.(undefined);
  runner.gate(runId).release();
  await eventually(async () => (await createActionQueueStore(database.db).get(orgA, runId))?.status === "done");
  expect(runner.aborted).toEqual([]);
});

it("replays a run the queue never held from its manifest, and a dispatch-time failure", async () => {
  const queue = queueOf(true);
  const direct = "018f2b9c-0000-7000-8000-000000000001";
  manifests.write(
    {
      runId: direct,
      reverseTs: "8299999999999",
      orgId: orgA,
      bucket: "docs",
      actionId: slowAction.id,
      selection: selection("a.txt"),
      params: {},
      batchId: "",
      enqueuedAtMs: 0,
    },
    { status: ActionRunStatus.FAILED, threadId: "t-9", startedAtMs: 7n, error: "boom", failedStepPath: "2" },
  );
  expect(manifests.objects.has(`${orgA}/docs/${manifestKey("8299999999999", direct)}`)).toBe(true);
  expect(await collect(watch(queue, orgA, direct))).toEqual([
    { started: { actionId: slowAction.id, threadId: "t-9", runId: direct, startedAtMs: "7" } },
    { failed: { error: "boom", failedStepPath: "2" } },
  ]);

  const { runId } = await enqueue(queue);
  runner.throwing.add(runId);
  const events = await collect(watch(queue, orgA, runId));
  expect(events.at(-1)).toEqual({ failed: { error: "the script service is down" } });
});

it("answers NOT_FOUND for a run of another organization or bucket, and INVALID_ARGUMENT for a bad run id", async () => {
  const queue = queueOf(false);
  const { runId } = await enqueue(queue);
  expect(await codeOf(() => collect(watch(queue, orgB, runId)))).toBe(Code.NotFound);
  expect(await codeOf(() => collect(watch(queue, orgA, runId, undefined, "other")))).toBe(Code.NotFound);
  expect(await codeOf(() => collect(watch(queue, orgA, "not-a-run")))).toBe(Code.InvalidArgument);
  expect(await codeOf(() => collect(watch(queue, orgA, runId, undefined, "")))).toBe(Code.InvalidArgument);
});
