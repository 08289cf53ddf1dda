import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ThreadEvent } from "../../gen/platform/script/v1/events_pb.js";
import { ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import {
  binary,
  freshDatabase,
  runAdmin,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// Several server processes on one PostgreSQL database share the threads: both run work, a watch
// on one process follows a thread the other runs, and a process killed mid-thread is replaced by
// the other once its lease expires. The embedded database admits one process only, which is
// what the test checks without TEST_DATABASE_URL.
const LEASE_MS = 1500;

if (process.env.TEST_DATABASE_URL) {
  describe("two server processes on one PostgreSQL database", () => {
    let database: TestPostgresDatabase;
    let sql: postgres.Sql;
    let gate: Gate;
    let a: StartedServer;
    let b: StartedServer;
    let clientA: PlatformClient;
    let clientB: PlatformClient;
    let ownerA = "";
    let ownerB = "";
    let owners: LeaseOwners;
    let held: { relay: string; effects: string };
    let blobDir: string;

    beforeAll(async () => {
      database = (await freshDatabase())!;
      sql = postgres(database.url, { max: 1, onnotice: () => {} });
      gate = await startGate();
      // Same database, secret key and object store, each its own data directory: how replicas run.
      blobDir = await mkdtemp(join(tmpdir(), "platform-blobs-"));
      const shared = [
        "--secret-key",
        randomBytes(32).toString("base64"),
        "--blob-dir",
        blobDir,
        "--thread-lease-ms",
        String(LEASE_MS),
        "--allow-private-network=true",
      ];
      // The database outlives either process: it is dropped once, at the end.
      const keep = { url: database.url, drop: async () => {} };
      a = await startPlatformServer(shared, { database: keep });
      const created = await runAdmin(a.dataDir, ["create-org", "replicas"]);
      const { apiKey } = created.json as { apiKey: string };
      const clientOf = (server: StartedServer) =>
        createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "replicas" });
      clientA = clientOf(a);
      for (const [name, source] of Object.entries(scripts)) await clientA.script.createScript({ name, source });

      // Two threads that only A can take, since B is not running yet; each stops at a step
      // whose HTTP call the gate holds until the test lets it go.
      const input = JSON.stringify({ gate: gate.url });
      held = {
        relay: (await clientA.script.createThread({ scriptName: "relay", inputJson: input })).threadId,
        effects: (await clientA.script.createThread({ scriptName: "effects", inputJson: input })).threadId,
      };
      await gate.waitFor("relay-held", 1);
      await gate.waitFor("effects-held", 1);
      // Which worker holds a thread is recorded in the lease column only (no API or log line
      // says it), so the test reads it from the database.
      owners = watchLeaseOwners(sql);
      const holders = await sql<
        { lease_owner: string }[]
      >`select lease_owner from threads where id in ${sql([held.relay, held.effects])}`;
      expect(new Set(holders.map((row) => row.lease_owner)).size).toBe(1);
      ownerA = holders[0]!.lease_owner;
      expect(ownerA).not.toBe("");

      b = await startPlatformServer(shared, { database: keep });
      clientB = clientOf(b);
    }, 90_000);

    afterAll(async () => {
      owners?.stop();
      await Promise.all([a?.stop(), b?.stop()]);
      await sql?.end();
      await database?.drop();
      await gate?.close();
      if (blobDir) await rm(blobDir, { recursive: true, force: true });
    });

    it("streams on B every event of a thread A runs, in order, as A writes them", async () => {
      const received: { event: ThreadEvent; at: number }[] = [];
      const watching = (async () => {
        for await (const event of clientB.script.watchThread({ threadId: held.relay }))
          received.push({ event, at: Date.now() });
      })();
      // Once B has replayed what A wrote so far (up to the held step), A goes on.
      await until(
        () => received.some(({ event }) => event.event.case === "stepStarted" && event.event.value.stepPath === "1"),
        "B replays the held step",
      );
      const released = Date.now();
      gate.release("relay-held");
      await watching;

      const replay: ThreadEvent[] = [];
      for await (const event of clientA.script.watchThread({ threadId: held.relay })) replay.push(event);
      expect(received.map(({ event }) => event)).toEqual(replay);
      const step = ["stepStarted", "stepCompleted"];
      expect(replay.map((event) => event.event.case)).toEqual([
        "started",
        ...step,
        ...step,
        ...step,
        ...step,
        "stepStarted",
        "yielded",
        "stepCompleted",
        ...step,
        ...step,
        "completed",
      ]);
      // Everything after the release was written by A while B's stream was open. Over
      // LISTEN/NOTIFY it arrives at once; without it, B would find it only at its once-a-second
      // poll, half a second late on average.
      const live = received.filter(({ event }) => Number(event.timestampMs) >= released);
      expect(live).toHaveLength(13);
      expect(owners.of(held.relay)).toEqual([ownerA]);
      const delays = live.map(({ event, at }) => at - Number(event.timestampMs)).sort((x, y) => x - y);
      const median = delays[Math.floor(delays.length / 2)]!;
      console.info(`A's events reached B's watch after ${delays[0]}-${delays.at(-1)} ms (median ${median} ms)`);
      expect(median).toBeLessThan(250);
    });

    it("runs threads created through A on both processes' workers, and completes them all", async () => {
      const ids: string[] = [];
      for (let i = 0; i < 16; i++) ids.push((await clientA.script.createThread({ scriptName: "naps" })).threadId);
      const threads = await Promise.all(ids.map((threadId, i) => finished(i % 2 === 0 ? clientA : clientB, threadId)));
      expect(threads.map((thread) => [thread.status, thread.error])).toEqual(
        ids.map(() => [ThreadStatus.COMPLETED, ""]),
      );

      const byOwner = new Map<string, number>();
      for (const id of ids) for (const owner of owners.of(id)) byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
      console.info(
        `threads run per worker: ${[...byOwner].map(([owner, n]) => `${owner === ownerA ? "A" : "B"} ${n}`).join(", ")}`,
      );
      expect(byOwner.size).toBe(2);
      expect(byOwner.get(ownerA)).toBeGreaterThan(0);
      ownerB = [...byOwner.keys()].find((owner) => owner !== ownerA)!;
    });

    it("finishes on B a thread A was running when A was killed, without re-running a completed step", async () => {
      const threadId = held.effects;
      const exited = new Promise((resolve) => a.process.once("exit", resolve));
      a.process.kill("SIGKILL");
      const killed = Date.now();
      await exited;
      gate.release("effects-held");

      const thread = await finished(clientB, threadId);
      expect([thread.status, thread.error]).toEqual([ThreadStatus.COMPLETED, ""]);
      const result = await clientB.script.getThreadResult({ threadId });
      expect(JSON.parse(new TextDecoder().decode(result.outputData))).toEqual({ statuses: [200, 200, 200, 200] });

      // The held call ran twice (A's was cut off by the kill), with the same idempotency key,
      // and B's attempt waited for A's lease to run out; every other call ran once.
      const calls = gate.calls.filter((call) => call.name.startsWith("effects-"));
      expect(calls.map((call) => call.name)).toEqual([
        "effects-first",
        "effects-held",
        "effects-held",
        "effects-second",
        "effects-last",
      ]);
      expect(new Set(calls.filter((call) => call.name === "effects-held").map((call) => call.key))).toEqual(
        new Set([`${threadId}:1`]),
      );
      const takeover = calls[2]!.at - killed;
      console.info(`B took the thread over ${takeover} ms after A was killed (lease ${LEASE_MS} ms)`);
      // A renewed its lease every third of it, so at least two thirds were left at the kill.
      expect(takeover).toBeGreaterThanOrEqual((LEASE_MS * 2) / 3 - 100);
      expect(owners.of(threadId)).toEqual([ownerA, ownerB]);

      const started = new Map<string, number>();
      const completed = new Map<string, number>();
      for await (const event of clientB.script.watchThread({ threadId })) {
        if (event.event.case === "stepStarted")
          started.set(event.event.value.stepPath, (started.get(event.event.value.stepPath) ?? 0) + 1);
        if (event.event.case === "stepCompleted")
          completed.set(event.event.value.stepPath, (completed.get(event.event.value.stepPath) ?? 0) + 1);
      }
      expect(Object.fromEntries(started)).toEqual({ "0": 1, "1": 2, "2": 1, "3": 1, "4": 1 });
      expect(Object.fromEntries(completed)).toEqual({ "0": 1, "1": 1, "2": 1, "3": 1, "4": 1 });
    });
  });
} else {
  it("refuses a second process on the same embedded data directory, naming the holder and the way out", async () => {
    const first = await startPlatformServer();
    try {
      const record = JSON.parse(await readFile(join(first.dataDir, "server.json"), "utf8")) as { pid: number };
      const second = spawn(process.execPath, [binary, "serve", "--data-dir", first.dataDir, "--api-port", "0"], {
        env: { ...process.env, DATABASE_URL: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      second.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      second.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
      expect(await new Promise((resolve) => second.once("exit", resolve))).toBe(1);
      expect(stdout).not.toContain('"ready"');
      expect(stderr).toContain(`the embedded database in ${first.dataDir} is in use by process ${record.pid}`);
      expect(stderr).toContain("DATABASE_URL");
      // The first server is untouched: still recorded as the data directory's server, still serving.
      expect(JSON.parse(await readFile(join(first.dataDir, "server.json"), "utf8"))).toEqual(record);
      expect(record.pid).toBe(first.process.pid);
      const health = await createPlatformClient({ apiUrl: first.urls.api! }).script.healthCheck({});
      expect(health.status).toBe("ok");
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });
}

const scripts = {
  // Waits at step 1 until the gate opens, then writes events for about a second.
  relay: `dsl: script/1
inputs: {type: object, required: [gate], properties: {gate: {type: string}}}
steps:
  - {id: one, execute: {tool: sleep, input: {duration: 50ms}}}
  - {id: held, execute: {tool: http.request, input: {method: POST, url: "\${inputs.gate}/relay-held", body: {}, timeout: 1m}}}
  - {id: two, execute: {tool: sleep, input: {duration: 250ms}}}
  - {id: three, execute: {tool: sleep, input: {duration: 250ms}}}
  - {id: report, yield: {value: {after: three}}}
  - {id: four, execute: {tool: sleep, input: {duration: 250ms}}}
  - {id: five, execute: {tool: sleep, input: {duration: 250ms}}}
output: {done: true}
`,
  naps: `dsl: script/1
steps:
  - {id: one, execute: {tool: sleep, input: {duration: 300ms}}}
  - {id: two, execute: {tool: sleep, input: {duration: 300ms}}}
  - {id: three, execute: {tool: sleep, input: {duration: 300ms}}}
`,
  // Every step but the nap is a call the gate counts: an effect outside the server.
  effects: `dsl: script/1
inputs: {type: object, required: [gate], properties: {gate: {type: string}}}
steps:
  - {id: first, execute: {tool: http.request, input: {method: POST, url: "\${inputs.gate}/effects-first", body: {}}}}
  - {id: held, execute: {tool: http.request, input: {method: POST, url: "\${inputs.gate}/effects-held", body: {}, timeout: 1m}}}
  - {id: second, execute: {tool: http.request, input: {method: POST, url: "\${inputs.gate}/effects-second", body: {}}}}
  - {id: nap, execute: {tool: sleep, input: {duration: 400ms}}}
  - {id: last, execute: {tool: http.request, input: {method: POST, url: "\${inputs.gate}/effects-last", body: {}}}}
output:
  statuses: ["\${steps.first.output.status}", "\${steps.held.output.status}", "\${steps.second.output.status}", "\${steps.last.output.status}"]
`,
};

async function finished(client: PlatformClient, threadId: string) {
  for (let i = 0; ; i++) {
    const thread = await client.script.getThread({ threadId });
    if (thread.status === ThreadStatus.COMPLETED || thread.status === ThreadStatus.FAILED) return thread;
    if (i > 600) throw new Error(`thread ${threadId} did not finish: ${thread.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 600) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface GateCall {
  readonly name: string;
  readonly key: string;
  readonly at: number;
}

interface Gate {
  readonly url: string;
  readonly calls: GateCall[];
  /** Answers the calls to `name`, held so far, and every later one at once. */
  release(name: string): void;
  waitFor(name: string, count: number): Promise<void>;
  close(): Promise<void>;
}

/** An HTTP endpoint scripts call: it records each call, and holds the `*-held` ones until released. */
async function startGate(): Promise<Gate> {
  const calls: GateCall[] = [];
  const releases = new Map<string, () => void>();
  const opened = new Map<string, Promise<void>>();
  const gateOf = (name: string) => {
    if (!opened.has(name))
      opened.set(
        name,
        name.endsWith("-held") ? new Promise<void>((resolve) => releases.set(name, resolve)) : Promise.resolve(),
      );
    return opened.get(name)!;
  };
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? "/").slice(1);
    calls.push({ name, key: String(req.headers["idempotency-key"] ?? ""), at: Date.now() });
    req.resume();
    res.on("error", () => {});
    void gateOf(name).then(() => {
      if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    release(name) {
      gateOf(name);
      releases.get(name)?.();
    },
    waitFor: (name, count) =>
      until(() => calls.filter((call) => call.name === name).length >= count, `${count} call(s) to ${name}`),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface LeaseOwners {
  /** The workers that held the thread's lease, in the order they took it. */
  of(threadId: string): string[];
  stop(): void;
}

/** Samples every thread's lease owner every 50 ms: a claim lasts far longer than that. */
function watchLeaseOwners(sql: postgres.Sql): LeaseOwners {
  const seen = new Map<string, string[]>();
  let stopped = false;
  const sample = async () => {
    while (!stopped) {
      const rows = await sql<
        { id: string; lease_owner: string }[]
      >`select id, lease_owner from threads where lease_owner <> ''`.catch(() => []);
      for (const { id, lease_owner: owner } of rows) {
        const list = seen.get(id) ?? [];
        if (list.at(-1) !== owner) list.push(owner);
        seen.set(id, list);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  void sample();
  return {
    of: (threadId) => seen.get(threadId) ?? [],
    stop: () => void (stopped = true),
  };
}
