// The thread engine's own cost, below the API: per-step overhead (p50/p99), how soon a watcher
// gets an event, time from a new thread to its first step, and sustained threads per second for
// a 3-step no-op script. Steps
// are `set` steps, which do no work, so what is measured is the engine (claim, lease, step rows,
// events, signals). On the embedded database, or on PostgreSQL with DATABASE_URL.
// Run: npx tsx bench/engine.bench.ts [threads=300]
import { randomBytes } from "node:crypto";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFilesystemBlobStore } from "../server/src/blob/filesystem-blob-store.js";
import { openDatabase } from "../server/src/db/database.js";
import { migrateDatabase } from "../server/src/db/migrate.js";
import { organizations } from "../server/src/auth/auth-schema.js";
import { compileContract } from "../server/src/services/script/dsl/contract.js";
import { parseScript } from "../server/src/services/script/dsl/parse-script.js";
import { createThreadWorker } from "../server/src/services/script/engine/thread-worker.js";
import { createScriptStore } from "../server/src/services/script/script-store.js";
import { createArtifactStore } from "../server/src/services/script/threads/artifact-store.js";
import { createThreadSignals } from "../server/src/services/script/threads/thread-signals.js";
import { createThreadStore, TERMINAL } from "../server/src/services/script/threads/thread-store.js";
import { createToolRegistry } from "../server/src/services/script/tools/tool-registry.js";
import { createSecretBox, SECRET_KEY_BYTES } from "../server/src/crypto/secret-box.js";

const threadCount = Number(process.argv[2] ?? 300);
const handle = await openDatabase({ dataDir: "memory://", databaseUrl: process.env.DATABASE_URL, maxConnections: 10 });
await migrateDatabase(handle, () => {});
const { db } = handle;
const store = createThreadStore(db);
const scripts = createScriptStore(db);
const signals = await createThreadSignals(handle);
const [org] = await db
  .insert(organizations)
  .values({ name: `bench-${Date.now()}` })
  .returning();

async function publish(name: string, steps: number) {
  const source = `dsl: script/1\nsteps:\n${Array.from({ length: steps }, (_, i) => `  - {id: s${i}, set: {values: {n: ${i}}}}`).join("\n")}\n`;
  const document = parseScript(source);
  const contract = compileContract(document).toProto();
  const { script } = await scripts.publish(org!.id, {
    name,
    source,
    sourceSha256: createHash("sha256").update(source).digest("hex"),
    description: "",
    contract: { inputs: contract.inputs, outputs: contract.outputs },
    toolsRequired: [],
  });
  return { name, version: script.activeVersion, steps };
}
const insert = (script: { name: string; version: number; steps: number }) =>
  store.insert({
    orgId: org!.id,
    scriptName: script.name,
    scriptVersion: script.version,
    input: {},
    env: {},
    metadata: {},
    totalSteps: script.steps,
  });

const blobRoot = await mkdtemp(join(tmpdir(), "bench-blobs-"));
const artifacts = createArtifactStore(db, createFilesystemBlobStore(blobRoot));
const worker = createThreadWorker({
  box: createSecretBox(randomBytes(SECRET_KEY_BYTES)),
  store,
  scripts,
  signals,
  tools: createToolRegistry([]),
  artifacts,
  concurrency: 16,
  pollMs: 200,
});
worker.start();
const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

async function waitAll(ids: string[]): Promise<void> {
  const pending = new Set(ids);
  while (pending.size > 0) {
    for (const id of [...pending]) {
      const row = await store.get(org!.id, id);
      if (row && TERMINAL.has(row.status)) pending.delete(id);
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// 1. Per-step overhead: one thread of 50 no-op steps; intervals between consecutive step starts.
//    A watcher follows it as WatchThread does (signal, then read the new events) and records how
//    long after each event was written it got it.
const long = await publish("long", 50);
const longThread = await insert(long);
const delivery: number[] = [];
let seen = 0;
let reading = Promise.resolve();
const unsubscribe = signals.onEvents(longThread.id, () => {
  reading = reading.then(async () => {
    for (const event of await store.eventsAfter(longThread.orgId, longThread.id, seen)) {
      delivery.push(Date.now() - event.createdAt);
      seen = event.sequence;
    }
  });
});
await signals.runnable();
await waitAll([longThread.id]);
await reading;
unsubscribe();
const starts = (await store.eventsAfter(longThread.orgId, longThread.id, 0))
  .filter((e) => e.kind === "stepStarted")
  .map((e) => e.createdAt);
const intervals = starts.slice(1).map((t, i) => t - starts[i]!);

// 2. New thread to its first step_started, one at a time.
const short = await publish("short", 3);
const firstStep: number[] = [];
for (let i = 0; i < 20; i++) {
  const thread = await insert(short);
  await signals.runnable();
  await waitAll([thread.id]);
  const first = (await store.eventsAfter(thread.orgId, thread.id, 0)).find((e) => e.kind === "stepStarted")!;
  firstStep.push(first.createdAt - thread.createdAt);
}

// 3. Sustained throughput: many 3-step threads at once.
const started = performance.now();
const ids: string[] = [];
for (let i = 0; i < threadCount; i++) ids.push((await insert(short)).id);
await signals.runnable();
await waitAll(ids);
const seconds = (performance.now() - started) / 1000;

await worker.stop();
await signals.close();
await handle.close();
await rm(blobRoot, { recursive: true, force: true });
console.log(`engine on ${handle.kind === "postgres" ? "PostgreSQL" : "embedded PGlite"}`);
console.log(
  `per-step overhead (50 no-op steps): p50 ${percentile(intervals, 0.5)} ms, p99 ${percentile(intervals, 0.99)} ms`,
);
console.log(
  `watch delivery after an event is written (${delivery.length} events): p50 ${percentile(delivery, 0.5)} ms, p99 ${percentile(delivery, 0.99)} ms`,
);
console.log(
  `new thread to first step_started (20 runs): p50 ${percentile(firstStep, 0.5)} ms, p99 ${percentile(firstStep, 0.99)} ms`,
);
console.log(
  `throughput: ${threadCount} threads of 3 steps in ${seconds.toFixed(2)} s = ${(threadCount / seconds).toFixed(1)} threads/s`,
);
