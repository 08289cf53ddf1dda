import { randomBytes } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { threadSteps } from "../script-schema.js";
import { createScriptStore, type ScriptStore } from "../script-store.js";
import { createThreadSignals, type ThreadSignals } from "../threads/thread-signals.js";
import { insertScriptThread } from "../threads/thread-test-kit.js";
import { createThreadStore, TERMINAL, type ThreadRow, type ThreadStore } from "../threads/thread-store.js";
import { ToolError } from "../tools/tool-error.js";
import type { Tool, ToolContext } from "../tools/tool.js";
import { createToolRegistry } from "../tools/tool-registry.js";
import { createThreadWorker, type ThreadWorker } from "./thread-worker.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../../crypto/secret-box.js";

// The worker with a single slot and a poll interval far longer than any test: a thread whose
// call is backing off must leave the slot to others, and threads are claimed again on time only
// because the worker wakes itself when a released thread becomes due.
let database: TestDatabase;
let store: ThreadStore;
let scripts: ScriptStore;
let signals: ThreadSignals;
let worker: ThreadWorker;
/** Thread ids of the calls `test.down` got. */
const downCalls: string[] = [];

const down: Tool = {
  name: "test.down",
  version: "1",
  description: "always unavailable",
  inputs: [],
  outputs: [],
  runtime: { entrypoint: "", language: "native", image: "", timeoutMs: 10_000, memoryMiB: 0, gpu: "" },
  createdAtMs: 0,
  async invoke(_input: JsonObject, context: ToolContext): Promise<JsonValue> {
    downCalls.push(context.threadId);
    throw new ToolError("unavailable", "the service is down");
  },
};

beforeAll(async () => {
  database = await openTestDatabase();
  store = createThreadStore(database.db);
  scripts = createScriptStore(database.db);
  signals = await createThreadSignals(database.handle);
  const tools = createToolRegistry([{ listTools: async () => [down] }]);
  worker = createThreadWorker({
    box: createSecretBox(randomBytes(SECRET_KEY_BYTES)),
    store,
    scripts,
    signals,
    tools,
    artifacts: { write: async () => undefined as never },
    concurrency: 1,
    pollMs: 600_000,
    leaseMs: 5_000,
  });
  worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await signals?.close();
  await database?.close();
});

async function startThread(source: string): Promise<ThreadRow> {
  const thread = await insertScriptThread(database, store, source);
  await signals.runnable();
  return thread;
}

async function until(thread: ThreadRow, predicate: (row: ThreadRow) => boolean, what: string): Promise<ThreadRow> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const row = (await store.get(thread.orgId, thread.id))!;
    if (predicate(row)) return row;
    if (Date.now() > deadline) throw new Error(`thread ${thread.id} never ${what}: ${row.status} ${row.error}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it("leaves the only slot to other threads while a call backs off, and continues its attempts when due", async () => {
  const backingOff = await startThread(`dsl: script/1
steps:
  - {id: call, retry: {maxAttempts: 2, backoff: fixed, initial: 1h}, execute: {tool: test.down}}
`);
  const released = await until(
    backingOff,
    (row) => row.runAfter > 0 && row.leaseOwner === "",
    "was released for its backoff",
  );
  expect(released.status).toBe("running");
  expect(released.runAfter - Date.now()).toBeGreaterThan(3_500_000);
  expect(await store.step(backingOff.orgId, backingOff.id, "0")).toMatchObject({ status: "waiting", attempt: 2 });

  const other = await startThread("dsl: script/1\nsteps:\n  - {id: one, set: {values: {x: 1}}}\n");
  expect((await until(other, (row) => TERMINAL.has(row.status), "ended")).status).toBe("completed");

  // The hour passes: the second attempt, the last, is made; the count did not start again.
  await store.updateIfStatus(backingOff.orgId, backingOff.id, ["running"], { runAfter: 1 });
  await database.db
    .update(threadSteps)
    .set({ wakeAt: 1 })
    .where(and(eq(threadSteps.threadId, backingOff.id), eq(threadSteps.stepPath, "0")));
  await signals.runnable();
  const failed = await until(backingOff, (row) => TERMINAL.has(row.status), "ended");
  expect([failed.status, failed.error]).toEqual(["failed", "the service is down"]);
  expect(downCalls.filter((id) => id === backingOff.id)).toHaveLength(2);
});

it("claims a released thread again at its wake-up time, without waiting for the poll", async () => {
  const thread = await startThread(
    "dsl: script/1\nsteps:\n  - {id: nap, wait: {for: 300ms}}\n  - {id: after, set: {values: {x: 1}}}\n",
  );
  await until(thread, (row) => row.runAfter > 0, "was released for its wait");
  expect((await until(thread, (row) => TERMINAL.has(row.status), "ended")).status).toBe("completed");
});
