import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { StepEvent, ThreadEvent } from "../../../../../gen/platform/script/v1/events_pb.js";
import { ScriptService } from "../../../../../gen/platform/script/v1/script_service_pb.js";
import { StepStatus } from "../../../../../gen/platform/script/v1/thread_pb.js";
import { failure } from "../../../../test/connect-failure.js";
import {
  call,
  collect,
  contextFor,
  EngineDouble,
  insertThread,
  openThreadTestKit,
  publishScript,
  stream as streamOf,
  type ThreadTestKit,
} from "./thread-test-kit.js";
import { threadEvent } from "./thread-events.js";
import type { ThreadRow } from "./thread-store.js";

const DEMO = `dsl: script/1
steps:
  - id: prepare
    set: {values: {x: 1}}
  - id: route
    decide:
      branches:
        - {name: big, when: "\${true}", steps: [{id: inner, yield: {value: 1}}]}
        - {name: other, default: true}
  - id: finish
    yield: {value: done}
`;

let kit: ThreadTestKit;
let orgId: string;
let otherOrg: string;
beforeAll(async () => {
  kit = await openThreadTestKit();
  orgId = await kit.database.createOrganization();
  otherOrg = await kit.database.createOrganization();
  await publishScript(kit.database, orgId, "demo", DEMO);
  const eventsAfter = kit.store.eventsAfter;
  vi.spyOn(kit.store, "eventsAfter").mockImplementation(async (org, threadId, sequence) => {
    const rows = await eventsAfter.call(kit.store, org, threadId, sequence);
    reads.set(threadId, (reads.get(threadId) ?? 0) + 1);
    for (const waiter of readWaiters.filter((w) => (reads.get(w.threadId) ?? 0) >= w.count)) waiter.resolve();
    return rows;
  });
});
afterAll(() => kit.close());

const methods = ScriptService.method;

function watchThread(
  thread: ThreadRow,
  options: { org?: string; signal?: AbortSignal } = {},
): AsyncIterator<ThreadEvent> {
  return streamOf(
    methods.watchThread,
    kit.methods.watchThread,
    { threadId: thread.id },
    contextFor(options.org ?? orgId, options.signal),
  );
}

function watchStep(thread: ThreadRow, stepPath: string): AsyncIterable<StepEvent> {
  return streamOf(methods.watchStep, kit.methods.watchStep, { threadId: thread.id, stepPath }, contextFor(orgId));
}

const resume = (thread: ThreadRow) =>
  call(methods.resumeThread, kit.methods.resumeThread, { threadId: thread.id }, contextFor(orgId));

/** The next `count` messages of a stream. */
async function next<T>(stream: AsyncIterator<T>, count: number): Promise<T[]> {
  const messages: T[] = [];
  for (let index = 0; index < count; index++) {
    const result = await stream.next();
    if (result.done) throw new Error(`the stream ended after ${index} of ${count} messages`);
    messages.push(result.value);
  }
  return messages;
}

/** How many times each thread's events were read, and who waits for a count. */
const reads = new Map<string, number>();
const readWaiters: { threadId: string; count: number; resolve: () => void }[] = [];

/**
 * Resolves after the `n`th read of the thread's events from now on: a watch stream's replay, or a
 * read on a wake-up or a poll. A stream that reads again after an event is still following the
 * thread; a test waits for that read instead of for a time.
 */
function nextReads(threadId: string, n = 1): Promise<void> {
  const count = (reads.get(threadId) ?? 0) + n;
  return new Promise((resolve) => readWaiters.push({ threadId, count, resolve }));
}

async function rest<T>(stream: AsyncIterator<T>): Promise<T[]> {
  return collect({ [Symbol.asyncIterator]: () => stream });
}

const casesOf = (events: { event: { case: string | undefined } }[]) => events.map((event) => event.event.case);

describe("WatchThread", () => {
  it("replays the recorded events, follows live ones in order, and ends after the terminal one", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    await engine.stepStarted("0", { name: "prepare", primitive: "set" });
    const stream = watchThread(engine.thread);
    expect(casesOf(await next(stream, 2))).toEqual(["started", "stepStarted"]);

    await engine.stepCompleted("0", { x: 1 });
    await engine.stepStarted("1", { name: "route", primitive: "decide" });
    await engine.decision("1", "big");
    await engine.yielded("1.0.0", 1);
    await engine.stepCompleted("1", {});
    // The stream has delivered these before the thread ends: it follows the thread live.
    const followed = await next(stream, 4);
    await engine.complete({ done: true }, 2);
    const events = [...followed, ...(await rest(stream))];
    // `decision` is a step-only kind: WatchThread leaves it out.
    expect(casesOf(events)).toEqual(["stepCompleted", "stepStarted", "yielded", "stepCompleted", "completed"]);
    expect(events.at(-1)?.event).toMatchObject({ case: "completed", value: { stepsExecuted: 2 } });
    expect(events.every((event) => event.threadId === engine.thread.id)).toBe(true);
  });

  it("ends at once for a finished thread", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    await engine.fail("deadline passed");
    expect(casesOf(await rest(watchThread(engine.thread)))).toEqual(["started", "failed"]);
  });

  it("keeps following a failed thread that was resumed, to its new end", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    await engine.stepStarted("0", { name: "call" });
    await engine.stepFailed("0", "boom");
    await engine.fail("boom", "0");
    await resume(engine.thread);

    const stream = watchThread(engine.thread);
    expect(casesOf(await next(stream, 4))).toEqual(["started", "stepStarted", "stepFailed", "failed"]);
    const readAgain = nextReads(engine.thread.id);
    const live = rest(stream);
    await readAgain; // past the `failed` event, the stream looks for more rather than ending
    await engine.claim();
    await engine.stepStarted("0", { name: "call" });
    await engine.stepCompleted("0", "ok");
    await engine.complete("ok");
    expect(casesOf(await live)).toEqual(["stepStarted", "stepCompleted", "completed"]);
  });

  it("ends with the `cancelled` event CancelThread writes", async () => {
    const thread = await insertThread(kit, orgId);
    const replayed = nextReads(thread.id);
    const stream = watchThread(thread);
    const live = rest(stream);
    await replayed; // the stream has read the (empty) history and waits for events
    await call(
      methods.cancelThread,
      kit.methods.cancelThread,
      { threadId: thread.id, reason: "bye" },
      contextFor(orgId),
    );
    expect((await live).map((event) => event.event)).toEqual([
      expect.objectContaining({ case: "cancelled", value: expect.objectContaining({ reason: "bye" }) }),
    ]);
  });

  it("finds events written without a signal by polling", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    const stream = watchThread(engine.thread);
    const replayed = nextReads(engine.thread.id);
    const first = stream.next();
    await replayed; // the event below comes after the stream's first read, with no signal
    await kit.store.appendEvent(orgId, engine.thread.id, threadEvent.started("demo", 2));
    expect((await first).value?.event.case).toBe("started");
    await stream.return?.();
  });

  it("keeps a PAUSED thread's stream open until the client goes away", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId));
    await engine.start();
    await engine.stepStarted("0", { name: "approve", primitive: "approval" });
    await engine.pause("0");
    const client = new AbortController();
    const stream = watchThread(engine.thread, { signal: client.signal });
    await next(stream, 2);
    const polled = nextReads(engine.thread.id);
    let ended = false;
    const end = stream.next().finally(() => (ended = true));
    await polled; // the stream read again after the pause instead of ending
    expect(ended).toBe(false);
    client.abort();
    expect((await end).done).toBe(true);
  });

  it("answers NOT_FOUND for another organization's thread", async () => {
    const thread = await insertThread(kit, orgId);
    const error = await failure(watchThread(thread, { org: otherOrg }).next());
    expect(error.code).toBe(Code.NotFound);
  });
});

describe("WatchStep", () => {
  it("snapshots a step not reached yet as PENDING, then sends its decision and `done`", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    const stream = watchStep(engine.thread, "1")[Symbol.asyncIterator]();
    const [snapshot] = await next(stream, 1);
    expect(snapshot).toMatchObject({
      threadId: engine.thread.id,
      stepPath: "1",
      event: {
        case: "snapshot",
        value: { status: StepStatus.PENDING, name: "route", primitive: "decide", startedAtMs: 0n },
      },
    });

    const live = rest(stream);
    await engine.stepStarted("0", { name: "prepare", primitive: "set" });
    await engine.stepCompleted("0", { x: 1 });
    await engine.stepStarted("1", { name: "route", primitive: "decide", input: { decision: "big" } });
    await engine.decision("1", "big");
    kit.clock.ms += 40;
    await engine.stepCompleted("1", { chosen: "big" });
    const events = await live;
    expect(casesOf(events)).toEqual(["decision", "done"]);
    expect(events[0]?.event).toMatchObject({ case: "decision", value: { strategy: "rule", chosenBranch: "big" } });
    expect(events[1]?.event).toMatchObject({
      case: "done",
      value: { durationMs: 40n, outputBytes: BigInt('{"chosen":"big"}'.length) },
    });
  });

  it("replays the running step's decision to a late subscriber and ends on `step_failed`", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    await engine.stepStarted("1", { name: "route", primitive: "decide", input: { q: 1 } });
    await engine.decision("1", "other");
    const stream = watchStep(engine.thread, "1")[Symbol.asyncIterator]();
    const replayed = await next(stream, 2);
    expect(replayed[0]?.event).toMatchObject({
      case: "snapshot",
      value: { status: StepStatus.RUNNING, name: "route" },
    });
    expect(
      new TextDecoder().decode(
        replayed[0]?.event.case === "snapshot" ? replayed[0].event.value.sampleInput : undefined,
      ),
    ).toBe('{"q":1}');
    expect(replayed[1]?.event).toMatchObject({ case: "decision", value: { chosenBranch: "other" } });
    const live = rest(stream);
    await engine.stepFailed("1", "no branch");
    expect((await live).map((event) => event.event)).toEqual([
      expect.objectContaining({
        case: "stepFailed",
        value: expect.objectContaining({ error: "no branch", stepPath: "1" }),
      }),
    ]);
  });

  it("sends only the snapshot for a finished step", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    await engine.stepStarted("0", { name: "prepare", primitive: "set" });
    await engine.stepCompleted("0", { x: 1 });
    const events = await collect(watchStep(engine.thread, "0"));
    expect(events.map((event) => event.event)).toEqual([
      expect.objectContaining({ case: "snapshot", value: expect.objectContaining({ status: StepStatus.COMPLETED }) }),
    ]);
  });

  it("does not replay a step's earlier run once it runs again after a resume", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    await engine.stepStarted("0", { name: "prepare", primitive: "set" });
    await engine.stepFailed("0", "first try");
    await engine.fail("first try", "0");
    await resume(engine.thread);
    await engine.claim();
    // The new run's row is written; its `stepStarted` is not yet: the old run's `stepFailed` is the
    // newest event of the step, and must not end the stream.
    await engine.save("0", { status: "running", error: "", startedAt: kit.clock.ms });
    const replayed = nextReads(engine.thread.id);
    const events = collect(watchStep(engine.thread, "0"));
    await replayed; // the stream has read the old run's `stepFailed` and goes on
    await engine.emit(threadEvent.stepStarted({ stepPath: "0", name: "prepare", primitive: "set", tool: "" }));
    await engine.stepCompleted("0", { x: 1 });
    const received = await events;
    expect(casesOf(received)).toEqual(["snapshot", "done"]);
    expect(received[0]?.event).toMatchObject({ case: "snapshot", value: { status: StepStatus.RUNNING } });
  });

  it("ends after the snapshot when the thread ends without the step", async () => {
    const engine = new EngineDouble(kit, await insertThread(kit, orgId, { scriptName: "demo" }));
    await engine.start();
    const replayed = nextReads(engine.thread.id);
    const events = collect(watchStep(engine.thread, "2"));
    await replayed;
    await engine.fail("gave up");
    expect(casesOf(await events)).toEqual(["snapshot"]);
  });

  it("answers NOT_FOUND for a path the script does not have, INVALID_ARGUMENT for one that is not a path", async () => {
    const thread = await insertThread(kit, orgId, { scriptName: "demo" });
    const missing = await failure(collect(watchStep(thread, "7")));
    expect([missing.code, missing.rawMessage]).toEqual([Code.NotFound, `thread "${thread.id}" has no step "7"`]);
    expect((await failure(collect(watchStep(thread, "1.5.0")))).code).toBe(Code.NotFound);
    expect((await failure(collect(watchStep(thread, "1.x")))).code).toBe(Code.InvalidArgument);
    // A child of the decide's first branch exists in the document.
    const stream = watchStep(thread, "1.0.0")[Symbol.asyncIterator]();
    expect((await stream.next()).value?.event).toMatchObject({
      case: "snapshot",
      value: { status: StepStatus.PENDING, name: "inner", primitive: "yield" },
    });
    await stream.return?.();
    expect(
      ConnectError.from(
        await failure(collect(watchStep({ ...thread, id: "00000000-0000-4000-8000-000000000000" }, "0"))),
      ).code,
    ).toBe(Code.NotFound);
  });
});
