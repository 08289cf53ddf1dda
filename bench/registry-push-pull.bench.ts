import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ociWorkspace, skopeo } from "../test/e2e/oci-tools.js";
import { runAdmin, startPlatformServer } from "../test/e2e/platform-server.js";

// Push and pull of one image with skopeo, against Debian's docker-registry (distribution 2.8,
// filesystem storage) and against the platform's registry, in interleaved rounds, each on freshly
// started servers warmed up by a smaller image; then the servers' peak RSS above idle while a 1 GiB
// single-layer image is pushed.
// Run: npx tsx bench/registry-push-pull.bench.ts [rounds]
const run = promisify(execFile);
const MiB = 1024 * 1024;
const ROUNDS = Number(process.argv[2] ?? 3);

interface Registry {
  readonly name: string;
  readonly host: string;
  readonly pid: number;
  /** skopeo flags carrying the credentials, `dest` or `src`. */
  creds(side: "dest" | "src"): string[];
  /** Repository path for an image name. */
  repo(name: string): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A layer folder holding `bytes` of random content, written in 4 MiB chunks (never whole in memory). */
async function randomLayer(bytes: number): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "bench-layer-"));
  await mkdir(join(root, "data"));
  const out = createWriteStream(join(root, "data", "blob.bin"));
  for (let written = 0; written < bytes; written += 4 * MiB) {
    if (!out.write(randomBytes(Math.min(4 * MiB, bytes - written)))) {
      await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    }
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return root;
}

async function buildRandomImage(layout: string, tag: string, layerBytes: number[]): Promise<void> {
  await run("umoci", ["init", "--layout", layout]);
  await run("umoci", ["new", "--image", `${layout}:${tag}`]);
  for (const bytes of layerBytes) {
    const root = await randomLayer(bytes);
    await run("umoci", ["insert", "--image", `${layout}:${tag}`, root, "/"], { maxBuffer: 64 * MiB });
    await rm(root, { recursive: true, force: true });
  }
}

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer`);
}

async function startDockerRegistry(): Promise<Registry> {
  const dir = await mkdtemp(join(tmpdir(), "bench-distribution-"));
  const port = await freePort();
  const config = join(dir, "config.yml");
  await writeFile(
    config,
    [
      "version: 0.1",
      "log: { level: error, accesslog: { disabled: true } }",
      `storage: { filesystem: { rootdirectory: ${join(dir, "data")} }, delete: { enabled: true } }`,
      `http: { addr: "127.0.0.1:${port}" }`,
      "",
    ].join("\n"),
  );
  const child = spawn("/usr/bin/docker-registry", ["serve", config], { stdio: "ignore" });
  await waitForHttp(`http://127.0.0.1:${port}/v2/`, child);
  return {
    name: "docker-registry 2.8",
    host: `127.0.0.1:${port}`,
    pid: child.pid!,
    creds: () => [],
    repo: (name) => `bench/${name}`,
    async stop() {
      // distribution may keep running after SIGTERM while it drains; its data is thrown away anyway.
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function startPlatformRegistry(): Promise<Registry> {
  const server = await startPlatformServer();
  const created = await runAdmin(server.dataDir, ["create-org", "bench"], { DATABASE_URL: server.databaseUrl ?? "" });
  const { apiKey } = created.json as { apiKey: string };
  return {
    name: "platform registry",
    host: new URL(server.urls.registry!).host,
    pid: server.process.pid!,
    creds: (side) => [`--${side}-creds`, `x:${apiKey}`],
    repo: (name) => `bench/${name}`,
    async stop() {
      await server.stop();
    },
  };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function push(registry: Registry, policy: string, layout: string, name: string): Promise<number> {
  return timed(() =>
    skopeo(policy, [
      "copy",
      "--dest-tls-verify=false",
      ...registry.creds("dest"),
      `oci:${layout}:t`,
      `docker://${registry.host}/${registry.repo(name)}:t`,
    ]),
  );
}

async function pull(registry: Registry, policy: string, target: string, name: string): Promise<number> {
  await rm(target, { recursive: true, force: true });
  return timed(() =>
    skopeo(policy, [
      "copy",
      "--src-tls-verify=false",
      ...registry.creds("src"),
      `docker://${registry.host}/${registry.repo(name)}:t`,
      `oci:${target}:t`,
    ]),
  );
}

async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const field = (name: string) =>
    Number(/(\d+) kB/.exec(status.split("\n").find((l) => l.startsWith(name)) ?? "")?.[1]) * 1024;
  return { rss: field("VmRSS:"), hwm: field("VmHWM:") };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** CPU seconds the process has used so far (user and system, all threads). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Measured {
  readonly seconds: number;
  /** CPU seconds the registry's process spent meanwhile. */
  readonly serverCpu: number;
}

async function measured(registry: Registry, operation: () => Promise<number>): Promise<Measured> {
  const before = await cpuSecondsOf(registry.pid);
  const seconds = await operation();
  return { seconds, serverCpu: (await cpuSecondsOf(registry.pid)) - before };
}

const starters = [startDockerRegistry, startPlatformRegistry];

async function main(): Promise<void> {
  const { dir, policy } = await ociWorkspace();
  try {
    // An image pushed and pulled, untimed, by each fresh server before its timed round: a server
    // that has run a while has compiled its hot paths, which a first push pays for.
    const warmUp = join(dir, "warm-up");
    await buildRandomImage(warmUp, "t", [16 * MiB, 16 * MiB]);
    const names: string[] = [];
    const times: { push: Measured[]; pull: Measured[] }[] = starters.map(() => ({ push: [], pull: [] }));
    for (let round = 0; round < ROUNDS; round++) {
      // Each round a new image: skopeo remembers where it pushed a blob before and would mount it
      // from there instead of uploading it, which measures mounts rather than transfers.
      const image = join(dir, `image${round}`);
      await buildRandomImage(image, "t", [25 * MiB, 25 * MiB, 25 * MiB, 25 * MiB]);
      // Interleaved: the registry that goes first alternates. Each round starts fresh servers: two
      // instances of the same server can differ by a fifth over a whole run, so one instance per
      // registry measures the instance as much as the registry.
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const registry = await starters[index]!();
        names[index] = registry.name;
        await push(registry, policy, warmUp, "warm-up");
        await pull(registry, policy, join(dir, "pulled"), "warm-up");
        times[index]!.push.push(await measured(registry, () => push(registry, policy, image, `app${round}`)));
        times[index]!.pull.push(
          await measured(registry, () => pull(registry, policy, join(dir, "pulled"), `app${round}`)),
        );
        await registry.stop();
      }
      await rm(image, { recursive: true, force: true });
    }
    const [theirs, ours] = times as [(typeof times)[0], (typeof times)[0]];
    const seconds = (values: Measured[]) => median(values.map((v) => v.seconds));
    const cpu = (values: Measured[]) => median(values.map((v) => v.serverCpu));
    console.log(`100 MiB image (4 random layers of 25 MiB), ${ROUNDS} rounds, median seconds`);
    console.log("| Registry | Push | Pull | Server CPU per push | per pull |\n|---|---|---|---|---|");
    for (const [index, name] of names.entries()) {
      const entry = times[index]!;
      console.log(
        `| ${name} | ${seconds(entry.push).toFixed(2)} | ${seconds(entry.pull).toFixed(2)} | ${cpu(entry.push).toFixed(2)} | ${cpu(entry.pull).toFixed(2)} |`,
      );
    }
    console.log(
      `| ratio ours/theirs | ${(seconds(ours.push) / seconds(theirs.push)).toFixed(2)} | ${(seconds(ours.pull) / seconds(theirs.pull)).toFixed(2)} | | |`,
    );
    console.log("\nEvery round, seconds (server CPU seconds):");
    for (const [index, name] of names.entries()) {
      const entry = times[index]!;
      const each = (values: Measured[]) =>
        values.map((v) => `${v.seconds.toFixed(2)} (${v.serverCpu.toFixed(2)})`).join(" ");
      console.log(`- ${name}: push ${each(entry.push)}; pull ${each(entry.pull)}`);
    }

    const big = join(dir, "big");
    await buildRandomImage(big, "t", [1024 * MiB]);
    console.log("\n1 GiB single-layer push: peak RSS above idle (VmHWM reset before the push − idle VmRSS)");
    console.log("| Registry | Idle RSS | Peak RSS | Above idle | Push |\n|---|---|---|---|---|");
    for (const start of starters) {
      // A fresh process each, so VmHWM counts only this push.
      const fresh = await start();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const idle = await memoryOf(fresh.pid);
      // VmHWM would otherwise hold the start-up peak; writing 5 to clear_refs resets it (Linux).
      await writeFile(`/proc/${fresh.pid}/clear_refs`, "5");
      const seconds = await push(fresh, policy, big, "big");
      const after = await memoryOf(fresh.pid);
      console.log(
        `| ${fresh.name} | ${(idle.rss / MiB).toFixed(0)} MiB | ${(after.hwm / MiB).toFixed(0)} MiB | ${((after.hwm - idle.rss) / MiB).toFixed(0)} MiB | ${seconds.toFixed(2)} s |`,
      );
      await fresh.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
