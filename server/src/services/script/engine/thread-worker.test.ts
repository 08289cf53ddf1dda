import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import { createScriptStore, type ScriptStore } from "../script-store.js";
import { artifactKey, createArtifactStore, type ArtifactStore } from "../threads/artifact-store.js";
import { createThreadSignals, type ThreadSignals } from "../threads/thread-signals.js";
import { insertScriptThread } from "../threads/thread-test-kit.js";
import { createThreadStore, TERMINAL, type ThreadRow, type ThreadStore } from "../threads/thread-store.js";
import { createNativeToolSource } from "../tools/native-tools.js";
import type { Tool, ToolContext } from "../tools/tool.js";
import { createToolRegistry } from "../tools/tool-registry.js";
import { createThreadWorker, type ThreadWorker } from "./thread-worker.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../../../crypto/secret-box.js";

// The engine end to end below the API: threads inserted as CreateThread does, run by the worker
// on the embedded database or PostgreSQL, checked through the rows and events it writes.
let database: TestDatabase;
let store: ThreadStore;
let scripts: ScriptStore;
let signals: ThreadSignals;
let worker: ThreadWorker;
let blobRoot: string;
let blobs: BlobStore;
let artifacts: ArtifactStore;
const calls: { stepPath: string; key: string; input: JsonObject }[] = [];
/** Gates calls wait on; once opened, a gate lets every later call through too. */
const gates = new Map<string, (() => void)[]>();
const opened = new Set<string>();
/** What the worker logged. */
const logs: { message: string; fields: Record<string, unknown> }[] = [];

/** `probe` records each call; with `hold: name` it waits until the test opens that gate. */
const probe: Tool = {
  name: "test.probe",
  version: "1",
  description: "records its calls",
  inputs: [
    { name: "value", type: "", required: false, description: "echoed" },
    { name: "hold", type: "string", required: false, description: "a gate to wait for" },
    { name: "fail", type: "boolean", required: false, description: "fail instead" },
  ],
  outputs: [],
  runtime: { entrypoint: "", language: "native", image: "", timeoutMs: 60_000, memoryMiB: 0, gpu: "" },
  createdAtMs: 0,
  async invoke(input: JsonObject, context: ToolContext): Promise<JsonValue> {
    calls.push({ stepPath: context.stepPath, key: context.idempotencyKey, input });
    const gate = input.hold;
    if (typeof gate === "string" && !opened.has(gate))
      await new Promise<void>((resolve) => gates.set(gate, [...(gates.get(gate) ?? []), resolve]));
    if (input.fail === true) throw new Error("probe failed on purpose");
    return { echo: input.value ?? null };
  },
};

beforeAll(async () => {
  database = await openTestDatabase();
  store = createThreadStore(database.db);
  scripts = createScriptStore(database.db);
  signals = await createThreadSignals(database.handle);
  const tools = createToolRegistry([createNativeToolSource({}), { listTools: async () => [probe] }]);
  blobRoot = await mkdtemp(join(tmpdir(), "worker-blobs-"));
  blobs = createFilesystemBlobStore(blobRoot);
  artifacts = createArtifactStore(database.db, blobs);
  worker = createThreadWorker({
    box: createSecretBox(randomBytes(SECRET_KEY_BYTES)),
    store,
    scripts,
    signals,
    tools,
    artifacts,
    pollMs: 50,
    leaseMs: 2_000,
    log: (message, fields) => logs.push({ message, fields }),
  });
  worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await signals?.close();
  await database.close();
  await rm(blobRoot, { recursive: true, force: true });
});

async function startThread(source: string, input: JsonObject = {}): Promise<ThreadRow> {
  const thread = await insertScriptThread(database, store, source, input);
  await signals.runnable();
  return thread;
}

async function until(
  thread: ThreadRow,
  predicate: (row: ThreadRow) => boolean,
  timeoutMs = 15_000,
): Promise<ThreadRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await store.get(thread.orgId, thread.id))!;
    if (predicate(row)) return row;
    if (Date.now() > deadline) throw new Error(`thread ${thread.id} stayed ${row.status}: ${row.error}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
/** Opens a gate once a call waits at it. */
async function open(gate: string): Promise<void> {
  while (!gates.has(gate)) await new Promise((resolve) => setTimeout(resolve, 10));
  opened.add(gate);
  for (const resolve of gates.get(gate)!) resolve();
}
const ended = (thread: ThreadRow) => until(thread, (row) => TERMINAL.has(row.status));
const kinds = async (thread: ThreadRow) =>
  (await store.eventsAfter(thread.orgId, thread.id, 0)).map((e) => (e.stepPath ? `${e.kind}@${e.stepPath}` : e.kind));

describe(`the thread worker (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("runs decide, iterate, yield and set to completion with every event in order", async () => {
    const thread = await startThread(
      `dsl: script/1
inputs: {type: object, properties: {items: {type: array}}}
steps:
  - id: greet
    execute: {tool: template.render, input: {template: "hello {{ who }}", values: {who: world}}}
  - id: route
    decide:
      branches:
        - {name: many, when: "size(inputs.items) > 2", steps: [{id: big, set: {values: {size: large}}}]}
        - {name: few, default: true, steps: [{id: small, set: {values: {size: small}}}]}
  - id: each
    iterate:
      over: inputs.items
      as: item
      maxConcurrency: 2
      steps:
        - {id: double, execute: {tool: json.transform, input: {data: "\${item}", expression: "data * 2"}}}
  - id: progress
    yield: {value: "\${steps.each.output}"}
output: {greeting: "\${steps.greet.output.text}", doubled: "\${steps.each.output}", route: "\${steps.route.output.chosen_branch}"}
`,
      { items: [1, 2, 3] },
    );
    const done = await ended(thread);
    expect([done.status, done.error]).toEqual(["completed", ""]);
    expect(done.output).toEqual({
      greeting: "hello world",
      doubled: [{ result: 2 }, { result: 4 }, { result: 6 }],
      route: "many",
    });
    const events = await kinds(thread);
    expect(events[0]).toBe("started");
    expect(events.at(-1)).toBe("completed");
    expect(events).toContain("decision@1");
    expect(events).toContain("yielded@3");
    expect(events.filter((e) => e.startsWith("stepCompleted@2."))).toHaveLength(3);
    expect((await store.steps(thread.orgId, thread.id)).map((s) => s.stepPath).sort()).toEqual([
      "0",
      "1",
      "1.0.0",
      "2",
      "2.0.0",
      "2.1.0",
      "2.2.0",
      "3",
    ]);
    expect((await store.eventsAfter(thread.orgId, thread.id, 0)).at(-1)?.payload).toMatchObject({ stepsExecuted: 8 });
  });

  it("completes a thread whose output does not match outputs, with warnings on the thread and in the log", async () => {
    const outputs = "{type: object, required: [id, total], properties: {id: {type: string}, total: {type: number}}}";
    const thread = await startThread(`dsl: script/1
outputs: ${outputs}
steps:
  - {id: sum, set: {values: {total: "12"}}}
output: {total: "\${steps.sum.output.total}"}
`);
    const done = await ended(thread);
    expect([done.status, done.error]).toEqual(["completed", ""]);
    expect(done.output).toEqual({ total: "12" });
    expect(done.warnings).toEqual(["output/id: is required", "output/total: must be number"]);
    expect((await kinds(thread)).at(-1)).toBe("completed");
    expect(logs.find((line) => line.fields.threadId === thread.id)).toEqual({
      message: "thread completed with output warnings",
      fields: { threadId: thread.id, warnings: done.warnings },
    });

    const matching = await startThread(`dsl: script/1
outputs: ${outputs}
steps: [{id: sum, set: {values: {total: 12}}}]
output: {id: "t-1", total: "\${steps.sum.output.total}"}
`);
    expect(await ended(matching)).toMatchObject({ status: "completed", warnings: [] });
    expect(logs.some((line) => line.fields.threadId === matching.id)).toBe(false);
  });

  it("continues after the last completed step when a dead worker's lease expires, running no step twice", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: one, execute: {tool: test.probe, input: {value: 1}}}
  - {id: two, execute: {tool: test.probe, input: {value: 2, hold: crash-gate}}}
  - {id: three, execute: {tool: test.probe, input: {value: 3}}}
`);
    // Wait until step two is running, then make the thread look abandoned by a dead process.
    while (!gates.has("crash-gate")) await new Promise((resolve) => setTimeout(resolve, 10));
    await store.updateIfStatus(thread.orgId, thread.id, ["running"], { leaseOwner: "dead-process", leaseExpiresAt: 1 });
    await open("crash-gate");
    const done = await ended(thread);
    expect(done.status).toBe("completed");
    const ours = calls.filter((c) => c.key.startsWith(`${thread.id}:`));
    expect(ours.filter((c) => c.stepPath === "0")).toHaveLength(1);
    expect(ours.filter((c) => c.stepPath === "2")).toHaveLength(1);
    expect(ours.every((c) => c.key === `${thread.id}:${c.stepPath}`)).toBe(true);
  });

  it("fails on a step error, then resumes that step with an override input", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: first, execute: {tool: test.probe, input: {value: before}}}
  - {id: flaky, execute: {tool: test.probe, input: {value: x, fail: true}}}
  - {id: last, execute: {tool: test.probe, input: {value: "\${steps.flaky.output.echo}"}}}
`);
    const failed = await ended(thread);
    expect([failed.status, failed.failedStepPath, failed.error]).toEqual(["failed", "1", "probe failed on purpose"]);
    await store.updateIfStatus(thread.orgId, thread.id, ["failed"], {
      status: "pending",
      error: "",
      finishedAt: 0,
      resumeOverride: { value: "fixed" },
      resumeCount: 1,
    });
    await signals.runnable();
    const done = await until(thread, (row) => row.status === "completed");
    expect(done.output).toEqual({ echo: "fixed" });
    expect(calls.filter((c) => c.key === `${thread.id}:0`)).toHaveLength(1);
    expect((await kinds(thread)).filter((k) => k === "failed")).toHaveLength(1);
  });

  it("stores what artifact.write steps write, a path written again replaced, and fails a step whose name cannot be stored", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: draft, execute: {tool: artifact.write, input: {name: reports/summary.md, content: "# draft"}}}
  - {id: bytes, execute: {tool: artifact.write, input: {name: raw.bin, contentBase64: "AAEC/w==", contentType: application/x-raw}}}
  - {id: final, execute: {tool: artifact.write, input: {name: reports/summary.md, content: "# final", contentType: text/markdown}}}
`);
    expect((await ended(thread)).status).toBe("completed");
    const rows = await artifacts.list(thread.orgId, thread.id);
    expect(rows.map((r) => [r.path, r.contentType, r.sizeBytes, r.stepPath])).toEqual([
      ["raw.bin", "application/x-raw", 4, "1"],
      ["reports/summary.md", "text/markdown", 7, "2"],
    ]);
    const summary = await blobs.open(artifactKey(thread.id, "reports/summary.md"));
    expect(await text(summary!.read())).toBe("# final");
    expect(summary!.sha256).toBe(rows[1]!.sha256);

    const refused = await startThread(`dsl: script/1
steps:
  - {id: long, execute: {tool: artifact.write, input: {name: "${"n".repeat(300)}", content: x}}}
`);
    const failed = await ended(refused);
    expect([failed.status, failed.failedStepPath]).toEqual(["failed", "0"]);
    expect(failed.error).toMatch(/artifact.write: .*segment longer than the filesystem allows/);
  });

  it("fails a thread whose failure message holds NUL, with U+FFFD in its place", async () => {
    const thread = await startThread(
      `dsl: script/1
inputs: {type: object, properties: {why: {type: string}}}
steps:
  - {id: stop, fail: {message: "\${inputs.why}"}}
`,
      { why: "bad\u0000byte" },
    );
    const done = await ended(thread);
    expect([done.status, done.error, done.failedStepPath]).toEqual(["failed", "bad\uFFFDbyte", "0"]);
    expect((await store.eventsAfter(thread.orgId, thread.id, 0)).at(-1)).toMatchObject({
      kind: "failed",
      payload: { error: "bad\uFFFDbyte" },
    });
  });

  it("waits, then continues", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: nap, wait: {for: 300ms}}
  - {id: after, set: {values: {woke: true}}}
`);
    const napping = await until(thread, (row) => row.runAfter > 0);
    expect(napping.leaseOwner).toBe("");
    expect((await ended(thread)).status).toBe("completed");
  });

  it("pauses for approval and goes on when resumed", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: ask, approval: {prompt: "ship it?"}}
  - {id: shipped, set: {values: {ok: "\${steps.ask.output.approved}"}}}
`);
    await until(thread, (row) => row.status === "paused");
    await store.updateIfStatus(thread.orgId, thread.id, ["paused"], {
      status: "pending",
      resumeOverride: { approved: true, comment: "go" },
    });
    await signals.runnable();
    const done = await until(thread, (row) => row.status === "completed");
    expect(done.output).toEqual({ ok: true });
  });

  it("aborts the running step when cancelled, which ends cancelled with the thread", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: nap, execute: {tool: sleep, input: {duration: 1m}}}
  - {id: never, execute: {tool: test.probe, input: {value: never}}}
`);
    await until(thread, (row) => row.currentStepPath === "0");
    await store.updateIfStatus(thread.orgId, thread.id, ["running"], {
      cancelRequested: true,
      cancelReason: "stop now",
      status: "cancelling",
    });
    await signals.cancelRequested(thread.id);
    const done = await ended(thread);
    expect(done.status).toBe("cancelled");
    expect(await store.step(thread.orgId, thread.id, "0")).toMatchObject({ status: "cancelled" });
    expect(calls.filter((c) => c.key === `${thread.id}:1`)).toHaveLength(0);
    expect((await store.eventsAfter(thread.orgId, thread.id, 0)).at(-1)).toMatchObject({
      kind: "cancelled",
      payload: { reason: "stop now", cancelledStepPath: "0" },
    });
  });

  it("stops at the next step when cancelled", async () => {
    const thread = await startThread(`dsl: script/1
steps:
  - {id: slow, execute: {tool: test.probe, input: {hold: cancel-gate}}}
  - {id: never, execute: {tool: test.probe, input: {value: never}}}
`);
    await until(thread, (row) => row.currentStepPath === "0");
    await store.updateIfStatus(thread.orgId, thread.id, ["running"], {
      cancelRequested: true,
      cancelReason: "changed my mind",
      status: "cancelling",
    });
    await open("cancel-gate");
    const done = await ended(thread);
    expect(done.status).toBe("cancelled");
    expect(calls.filter((c) => c.key === `${thread.id}:1`)).toHaveLength(0);
    expect((await store.eventsAfter(thread.orgId, thread.id, 0)).at(-1)).toMatchObject({
      kind: "cancelled",
      payload: { reason: "changed my mind", cancelledStepPath: "1" },
    });
  });
});
