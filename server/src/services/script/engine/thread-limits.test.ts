import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import { DEFAULT_EXPRESSION_LIMITS } from "../dsl/cost-meter.js";
import { createScriptStore, type ScriptStore } from "../script-store.js";
import { createArtifactStore } from "../threads/artifact-store.js";
import { createThreadSignals, type ThreadSignals } from "../threads/thread-signals.js";
import { insertScriptThread } from "../threads/thread-test-kit.js";
import { createThreadStore, TERMINAL, type ThreadRow, type ThreadStore } from "../threads/thread-store.js";
import type { Tool } from "../tools/tool.js";
import { createToolRegistry } from "../tools/tool-registry.js";
import { createThreadWorker, type ThreadWorker } from "./thread-worker.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../../crypto/secret-box.js";

// A thread's budget through the worker: a memory limit of 1 MiB and 3 iteration slots, on the
// embedded database or PostgreSQL.
let database: TestDatabase;
let store: ThreadStore;
let scripts: ScriptStore;
let signals: ThreadSignals;
let worker: ThreadWorker;
let blobRoot: string;
const running = { now: 0, most: 0, calls: 0 };

const testTool = (name: string, invoke: Tool["invoke"]): Tool => ({
  name,
  version: "1",
  description: name,
  inputs: [{ name: "bytes", type: "integer", required: false, description: "size of the text returned" }],
  outputs: [],
  runtime: { entrypoint: "", language: "native", image: "", timeoutMs: 60_000, memoryMiB: 0, gpu: "" },
  createdAtMs: 0,
  invoke,
});
/** Returns a text of `bytes` characters. */
const blob = testTool("test.blob", async (input: JsonObject): Promise<JsonValue> => ({
  text: "b".repeat(Number(input.bytes ?? 0)),
}));
/** Counts the calls running at once; each lasts a few turns of the event loop and a short timer. */
const track = testTool("test.track", async (): Promise<JsonValue> => {
  running.calls++;
  running.most = Math.max(running.most, ++running.now);
  await new Promise((resolve) => setTimeout(resolve, 40));
  running.now--;
  return { ok: true };
});

beforeAll(async () => {
  database = await openTestDatabase();
  store = createThreadStore(database.db);
  scripts = createScriptStore(database.db);
  signals = await createThreadSignals(database.handle);
  blobRoot = await mkdtemp(join(tmpdir(), "limits-blobs-"));
  const artifacts = createArtifactStore(database.db, createFilesystemBlobStore(blobRoot));
  const tools = createToolRegistry([{ listTools: async () => [blob, track] }]);
  const limits = { memoryBytes: 1024 * 1024, concurrentIterations: 3, expressions: DEFAULT_EXPRESSION_LIMITS };
  worker = createThreadWorker({
    box: createSecretBox(randomBytes(SECRET_KEY_BYTES)),
    store,
    scripts,
    signals,
    tools,
    artifacts,
    pollMs: 50,
    leaseMs: 5_000,
    limits,
  });
  worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await signals?.close();
  await database.close();
  await rm(blobRoot, { recursive: true, force: true });
});

async function run(source: string): Promise<ThreadRow> {
  const thread = await insertScriptThread(database, store, source);
  await signals.runnable();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const row = (await store.get(thread.orgId, thread.id))!;
    if (TERMINAL.has(row.status)) return row;
    if (Date.now() > deadline) throw new Error(`thread ${thread.id} stayed ${row.status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe(`a thread's limits (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("fails the step whose output passes the memory limit, naming the step and the limit", async () => {
    const thread = await run(`dsl: script/1
steps:
  - id: gather
    iterate:
      over: "[1, 2, 3, 4, 5, 6, 7, 8]"
      maxConcurrency: 2
      steps:
        - {id: fetch, execute: {tool: test.blob, input: {bytes: 200000}}}
`);
    expect(thread.status).toBe("failed");
    expect(thread.error).toMatch(
      /^step "fetch" \(0\.[4-7]\.0\) exceeded the thread's memory limit of 1 MiB: its output of 195\.3 KiB on top of [0-9.]+ KiB already held or being read by the thread$/,
    );
  });

  it("counts only what a loop keeps: iterations that read much and keep little run through", async () => {
    const thread = await run(`dsl: script/1
steps:
  - id: measure
    iterate:
      over: "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]"
      maxConcurrency: 3
      steps:
        - {id: fetch, execute: {tool: test.blob, input: {bytes: 200000}}}
        - {id: keep, set: {values: {size: "\${size(steps.fetch.output.text)}"}}}
output: "\${steps.measure.output.map(r, r.size)}"
`);
    expect([thread.status, thread.error]).toEqual(["completed", ""]);
    expect(thread.output).toEqual(Array(12).fill(200000));
  });

  it("runs at most the thread's iteration slots at once across nested loops, plus one per running loop", async () => {
    Object.assign(running, { now: 0, most: 0, calls: 0 });
    const thread = await run(`dsl: script/1
steps:
  - id: outer
    iterate:
      over: "[1, 2, 3, 4]"
      as: i
      maxConcurrency: 64
      steps:
        - id: inner
          iterate:
            over: "[1, 2, 3, 4]"
            as: j
            maxConcurrency: 64
            steps:
              - {id: call, execute: {tool: test.track}}
`);
    expect(thread.status).toBe("completed");
    expect(running.calls).toBe(16);
    // Three slots and the outer loop's own iteration: every call runs in an inner iteration, and
    // the inner loops that run are the outer iterations that run.
    expect(running.most).toBeGreaterThan(1);
    expect(running.most).toBeLessThanOrEqual(3 + 1);
  });
});
