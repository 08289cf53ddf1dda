// The action queue through the public API, against the real binary: how soon a queued run starts
// (EnqueueAction answered -> the `started` line of its WatchActionRun stream, p50/p99, one run at
// a time so nothing queues ahead of it) and how many trivial runs per second the queue gets through
// (a bulk of `extract_text` over a small text object, from EnqueueBulkActions until ListActiveRuns
// is empty), with the default per-organization bound and with one bulk per organization, and the
// server's CPU time per run (from /proc, so it holds on a busy machine).
// On the embedded database, or on a fresh database of TEST_DATABASE_URL's server.
// Run: [TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test] npx tsx bench/action-dispatch.bench.ts [runs=100] [bulk=400] [organizations=4]
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { Agent, request } from "undici";
import { createPlatformClient } from "../sdk/src/index.js";
import { runAdmin, s3ClientFor, startPlatformServer } from "../test/e2e/platform-server.js";

const [runs = 100, bulk = 400, organizations = 4] = process.argv.slice(2).map(Number);
const BUCKET = "bench";
const KEY = "note.txt";

const server = await startPlatformServer();
const dispatcher = new Agent({ connections: 32 });
const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

interface Tenant {
  readonly headers: Record<string, string>;
}

async function tenant(name: string): Promise<Tenant> {
  const created = await runAdmin(server.dataDir, ["create-org", name]);
  const { apiKey, organization } = created.json as { apiKey: string; organization: { id: string } };
  const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: name });
  const s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  await s3.send(
    new PutObjectCommand({ Bucket: BUCKET, Key: KEY, Body: "A short note to extract.", ContentType: "text/plain" }),
  );
  s3.destroy();
  return { headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" } };
}

async function post<T>(who: Tenant, path: string, body: unknown): Promise<T> {
  const answer = await request(`${server.urls.data}${path}`, {
    method: "POST",
    dispatcher,
    headers: who.headers,
    body: JSON.stringify(body),
  });
  const json = (await answer.body.json()) as T;
  if (answer.statusCode !== 200) throw new Error(`POST ${path}: ${answer.statusCode} ${JSON.stringify(json)}`);
  return json;
}

const selection = { pillar: "objects", objectSingle: { bucket: BUCKET, key: KEY } };

/** Enqueues one run and times its `started` line; reads the stream to its end so runs do not overlap. */
async function startLatency(who: Tenant): Promise<number> {
  const begin = performance.now();
  const { runId } = await post<{ runId: string }>(who, "/actions/enqueue", { selection, actionId: "extract_text" });
  const answer = await request(`${server.urls.data}/actions/runs/watch`, {
    method: "POST",
    dispatcher,
    headers: who.headers,
    body: JSON.stringify({ runId, bucket: BUCKET }),
  });
  let started = 0;
  let ended = "";
  for await (const line of createInterface({ input: answer.body })) {
    if (line === "") continue;
    const event = JSON.parse(line) as Record<string, unknown>;
    if ("started" in event && started === 0) started = performance.now() - begin;
    if ("completed" in event || "failed" in event) ended = Object.keys(event)[0]!;
  }
  if (ended !== "completed") throw new Error(`run ${runId} ended ${ended || "without an end"}`);
  return started;
}

/** CPU seconds the server process has used (user + system), from /proc. */
const serverCpuSeconds = () => {
  const fields = readFileSync(`/proc/${server.process.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/** Enqueues `bulk` runs for each tenant at once and times until none is active: runs per second, server CPU ms per run. */
async function throughput(tenants: Tenant[]): Promise<{ perSecond: number; serverCpuMsPerRun: number }> {
  const begin = performance.now();
  const cpuBefore = serverCpuSeconds();
  await Promise.all(
    tenants.map((who) =>
      post(who, "/actions/enqueue/bulk", {
        selections: Array.from({ length: bulk }, () => selection),
        actionId: "extract_text",
      }),
    ),
  );
  for (;;) {
    const active = await Promise.all(
      tenants.map((who) => post<{ runs: unknown[] }>(who, "/actions/runs/active", { bucket: BUCKET })),
    );
    if (active.every((answer) => answer.runs.length === 0)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const total = tenants.length * bulk;
  return {
    perSecond: Number((total / ((performance.now() - begin) / 1000)).toFixed(1)),
    serverCpuMsPerRun: Number((((serverCpuSeconds() - cpuBefore) * 1000) / total).toFixed(1)),
  };
}

try {
  const first = await tenant("bench-0");
  for (let i = 0; i < 5; i++) await startLatency(first); // warm-up: the template published, caches filled
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) latencies.push(await startLatency(first));
  const others = await Promise.all(Array.from({ length: organizations - 1 }, (_, i) => tenant(`bench-${i + 1}`)));
  const oneTenant = await throughput([first]);
  const manyTenants = await throughput([first, ...others]);
  console.log(
    JSON.stringify(
      {
        database: server.databaseUrl ? "postgres" : "embedded",
        enqueueToStartedMs: {
          p50: Number(percentile(latencies, 0.5).toFixed(1)),
          p99: Number(percentile(latencies, 0.99).toFixed(1)),
          runs,
        },
        trivialRunsPerSecond: {
          oneOrganization: oneTenant,
          [`${organizations}Organizations`]: manyTenants,
          bulk,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await dispatcher.close();
  await server.stop();
}
