// Throughput and latency of GetEnvVar, against one server process, in one run: native Connect
// JSON and its transcoded HTTP route, authenticated through the credential cache as the server
// does; the same HTTP route with the key read from the database on every call (a prepared
// statement), and with the auth interceptor as it was before the cache (the baseline: the key read
// on every call through drizzle's builder); and a raw node:http JSON handler doing the same
// work by hand (same authentication, same store read; no routing, transcoding or Connect
// protocol), with and without the cache. Rounds are interleaved so machine noise hits every
// variant alike; the table reports each variant's median round, and the ratios their spread over
// the rounds (each ratio taken within one round).
// Server CPU per request comes from the server process's own CPU clock, so it holds on a busy machine.
// Run: npx tsx bench/get-env-var.bench.ts [seconds-per-round=4] [rounds=3] [connections=16]
// (DATABASE_URL=postgres://… for PostgreSQL; use a fresh database)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";
import { Pool } from "undici";
import { createSecretBox, SECRET_KEY_BYTES } from "../server/src/crypto/secret-box.js";
import { openEnvValue, sealEnvValue } from "../server/src/services/script/env-sealing.js";
import { formatNs, measure } from "./measure.js";

const [seconds = 4, rounds = 3, connections = 16] = process.argv.slice(2).map(Number);

const server = spawn(
  process.execPath,
  ["--import", "tsx", new URL("./get-env-var-server.ts", import.meta.url).pathname],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const target = await new Promise<{
  api: string;
  uncachedApi: string;
  beforeApi: string;
  raw: string;
  token: string;
  organization: string;
}>((resolve) => createInterface({ input: server.stdout! }).once("line", (line) => resolve(JSON.parse(line))));
const auth = { authorization: `Bearer ${target.token}`, "x-organization-name": target.organization };

interface Variant {
  readonly name: string;
  readonly origin: string;
  readonly request: { method: "GET" | "POST"; path: string; headers: Record<string, string>; body?: string };
}
const variants: Variant[] = [
  {
    name: "Connect JSON  POST /platform.script.v1.ScriptService/GetEnvVar",
    origin: target.api,
    request: {
      method: "POST",
      path: "/platform.script.v1.ScriptService/GetEnvVar",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"key":"REGION"}',
    },
  },
  {
    name: "HTTP route    GET /v1/script/env/REGION",
    origin: target.api,
    request: { method: "GET", path: "/v1/script/env/REGION", headers: auth },
  },
  {
    name: "HTTP route, key read per call (prepared)",
    origin: target.uncachedApi,
    request: { method: "GET", path: "/v1/script/env/REGION", headers: auth },
  },
  {
    name: "HTTP route, auth as before the cache (baseline)",
    origin: target.beforeApi,
    request: { method: "GET", path: "/v1/script/env/REGION", headers: auth },
  },
  {
    name: "raw node:http GET /env/REGION",
    origin: target.raw,
    request: { method: "GET", path: "/env/REGION", headers: auth },
  },
  {
    name: "raw node:http, key read per call",
    origin: target.raw,
    request: { method: "GET", path: "/uncached/REGION", headers: auth },
  },
];

/** The server process's CPU time so far, in microseconds: charged to a round's requests, it is what each costs the server whatever else the machine runs. */
async function serverCpuMicros(): Promise<number> {
  const response = await fetch(`${target.raw}/cpu`);
  return ((await response.json()) as { micros: number }).micros;
}

async function round(
  variant: Variant,
  durationMs: number,
): Promise<{ rps: number; p50: number; p99: number; cpu: number }> {
  const pool = new Pool(variant.origin, { connections, pipelining: 1 });
  const cpuBefore = await serverCpuMicros();
  const latencies: number[] = [];
  const deadline = performance.now() + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const start = performance.now();
      const response = await pool.request(variant.request);
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${variant.name}: status ${response.statusCode}`);
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await pool.close();
  const cpu = ((await serverCpuMicros()) - cpuBefore) / latencies.length;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rps: latencies.length / (durationMs / 1000), p50: at(0.5), p99: at(0.99), cpu };
}

for (const variant of variants) await round(variant, 1000); // warm-up
const results = new Map<string, { rps: number; p50: number; p99: number; cpu: number }[]>();
for (let r = 0; r < rounds; r++) {
  // Each round starts one variant later, so that no variant always runs in the same slot.
  for (const variant of [...variants.slice(r % variants.length), ...variants.slice(0, r % variants.length)]) {
    const result = await round(variant, seconds * 1000);
    results.set(variant.name, [...(results.get(variant.name) ?? []), result]);
  }
}
server.kill("SIGTERM");

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const summary = variants.map((v) => {
  const rs = results.get(v.name)!;
  return {
    name: v.name,
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    cpu: median(rs.map((r) => r.cpu)),
  };
});
console.log(`GetEnvVar, ${connections} connections, ${rounds} interleaved rounds of ${seconds} s (medians)`);
for (const s of summary)
  console.log(
    `${s.name.padEnd(62)} ${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  server CPU ${s.cpu.toFixed(0)} µs/req`,
  );
/** A throughput ratio taken within each round: median, and min–max over the rounds. */
function ratio(label: string, over: Variant, under: Variant): void {
  const a = results.get(over.name)!;
  const b = results.get(under.name)!;
  const ratios = a.map((r, i) => r.rps / b[i]!.rps).sort((x, y) => x - y);
  console.log(
    `${label.padEnd(48)} ${median(ratios).toFixed(2)}x  (rounds ${ratios[0]!.toFixed(2)}–${ratios.at(-1)!.toFixed(2)})`,
  );
}
const [connect, rest, restUncached, restBefore, raw, rawUncached] = variants as [
  Variant,
  Variant,
  Variant,
  Variant,
  Variant,
  Variant,
];
ratio("HTTP route / HTTP route as before the cache", rest, restBefore);
ratio("Connect / HTTP route as before the cache", connect, restBefore);
ratio("HTTP route / HTTP route, key read per call", rest, restUncached);
ratio("HTTP route / raw handler (both cached)", rest, raw);
ratio("Connect / raw handler (both cached)", connect, raw);
ratio("raw handler / raw handler, key read per call", raw, rawUncached);
const box = createSecretBox(new Uint8Array(randomBytes(SECRET_KEY_BYTES)));
const sealed = box.seal(new TextEncoder().encode("eu-west"), "platform.script.v1.EnvVar/org/REGION");
const opening = measure("open", () => box.open(sealed, "platform.script.v1.EnvVar/org/REGION"));
const slot = { orgId: "00000000-0000-4000-8000-000000000000", key: "REGION" };
const stored = sealEnvValue(box, slot, "eu-west");
const remembered = measure("open remembered", () => openEnvValue(box, slot, stored));
console.log(
  `Opening one sealed value in process: ${formatNs(opening.nsPerOp)}; one the store opened before (remembered): ${formatNs(remembered.nsPerOp)}`,
);
