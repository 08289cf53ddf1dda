// The issuer's token endpoint through HTTP, against the real binary on PostgreSQL (a fresh database
// of TEST_DATABASE_URL's server; the embedded database without it): refresh grants per second
// (each client rotating a session of its own, back to back) and password logins per second.
// Run: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/identity-issuer.bench.ts [seconds=10] [clients=32]
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { Agent, request } from "undici";
import { createPlatformClient } from "../sdk/src/index.js";
import { runAdmin, startPlatformServer } from "../test/e2e/platform-server.js";

const seconds = Number(process.argv[2] ?? 10);
const clients = Number(process.argv[3] ?? 32);
const PASSWORD = "correct horse battery staple";

const server = await startPlatformServer();
const dispatcher = new Agent({ connections: clients, pipelining: 1 });
try {
  const created = await runAdmin(server.dataDir, ["create-org", "bench"]);
  const { apiKey } = created.json as { apiKey: string };
  const admin = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "bench" }).identityAdmin;
  await admin.createPool({ body: { name: "bench" } });
  // Budgets far above what the bench sends: it measures the grants, not the limiter's refusals.
  const budget = { requests: 10_000_000, window_seconds: 60 };
  await admin.updatePool({
    path: { pool: "bench" },
    body: {
      policiesJson: JSON.stringify({
        rate_limits: { token: budget, login: budget, login_ip: budget, login_email: budget },
      }),
    },
  });
  const emails = Array.from({ length: clients }, (_, i) => `user-${i}@example.com`);
  for (const email of emails) await admin.createUser({ path: { pool: "bench" }, body: { email, password: PASSWORD } });
  const tokenUrl = `${server.urls.identity}/bench/bench/token`;

  async function token(form: Record<string, string>): Promise<Record<string, string>> {
    const answer = await request(tokenUrl, {
      method: "POST",
      dispatcher,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
    const body = (await answer.body.json()) as Record<string, string>;
    if (answer.statusCode !== 200)
      throw new Error(`token endpoint answered ${answer.statusCode}: ${JSON.stringify(body)}`);
    return body;
  }

  /** CPU seconds the server process has used (user + system), from /proc. */
  const serverCpuSeconds = () => {
    const fields = readFileSync(`/proc/${server.process.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };

  async function rate(
    workers: number,
    op: (worker: number) => Promise<unknown>,
  ): Promise<{ perSecond: number; p50: number; p99: number; perServerCpuSecond: number }> {
    const latencies: number[] = [];
    const cpuBefore = serverCpuSeconds();
    const deadline = performance.now() + seconds * 1000;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: workers }, async (_, worker) => {
        while (performance.now() < deadline) {
          const began = performance.now();
          await op(worker);
          latencies.push(performance.now() - began);
        }
      }),
    );
    const cpu = serverCpuSeconds() - cpuBefore;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => Math.round(latencies[Math.floor(q * (latencies.length - 1))]! * 10) / 10;
    return {
      perSecond: latencies.length / ((performance.now() - start) / 1000),
      p50: at(0.5),
      p99: at(0.99),
      perServerCpuSecond: latencies.length / cpu,
    };
  }

  const login = (worker: number) => token({ grant_type: "password", email: emails[worker]!, password: PASSWORD });
  const sessions = await Promise.all(emails.map(async (_, worker) => (await login(worker)).refresh_token!));
  const refresh = async (worker: number) =>
    (sessions[worker] = (
      await token({ grant_type: "refresh_token", refresh_token: sessions[worker]! })
    ).refresh_token!);
  await rate(clients, refresh); // warm-up: JIT, connection pools, caches
  const refreshes = await rate(clients, refresh);
  const logins = await rate(Math.min(clients, 8), login);

  const cores = availableParallelism();
  const row = (what: string, r: { perSecond: number; p50: number; p99: number; perServerCpuSecond: number }) =>
    `| ${what} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / cores).toFixed(0)} | ${r.perServerCpuSecond.toFixed(0)} | ${r.p50} ms | ${r.p99} ms |`;
  console.log(
    `\nIssuer token endpoint over HTTP, ${server.databaseUrl ? "PostgreSQL" : "embedded"}, ${cores} cores shared by server, client and database, ${seconds} s per measure\n`,
  );
  console.log(
    "| What | Per second | Per second / cores | Per server CPU second | p50 | p99 |\n|---|---|---|---|---|---|",
  );
  console.log(row(`refresh grant, ${clients} clients each rotating its own session`, refreshes));
  console.log(row(`password grant (argon2id verify), ${Math.min(clients, 8)} clients`, logins));
} finally {
  await dispatcher.close();
  await server.stop();
}
