import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createGitClient } from "../gen/openapi/git/client.js";
import { runAdmin, startPlatformServer } from "../test/e2e/platform-server.js";

// The git wire through the platform's gateway against `git http-backend` served directly (CGI
// behind a minimal HTTP server, no authentication), in the same run and in interleaved rounds:
// clone and push of a repository of about 50 MB, a fetch with nothing new, a one-commit push.
// Run: npx tsx bench/git-wire.bench.ts [rounds]
const run = promisify(execFile);
const ROUNDS = Number(process.argv[2] ?? 5);
const MiB = 1024 * 1024;

interface Remote {
  readonly name: string;
  /** A new empty repository's clone URL. */
  newRepository(): Promise<string>;
  stop(): Promise<void>;
}

const env = (home: string) => ({
  PATH: process.env.PATH,
  HOME: home,
  GIT_TERMINAL_PROMPT: "0",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "Bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
});

/** `git http-backend` as CGI: the request's body to its stdin, its header block and body back. */
async function startHttpBackend(): Promise<Remote> {
  const root = await mkdtemp(join(tmpdir(), "bench-http-backend-"));
  let count = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://backend");
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        REMOTE_USER: "bench",
        REQUEST_METHOD: req.method ?? "GET",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] } : {}),
        ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      },
      stdio: ["pipe", "pipe", "ignore"],
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headerDone = false;
    child.stdout.on("data", (chunk: Buffer) => {
      if (headerDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      headerDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    child.stdout.on("end", () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    name: "git http-backend",
    async newRepository() {
      const name = `r${count++}.git`;
      await run("git", ["init", "-q", "--bare", "-b", "main", join(root, name)]);
      await run("git", ["-C", join(root, name), "config", "http.receivepack", "true"]);
      return `http://127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function startGateway(): Promise<Remote> {
  const server = await startPlatformServer();
  const created = await runAdmin(server.dataDir, ["create-org", "bench"], { DATABASE_URL: server.databaseUrl ?? "" });
  const { apiKey } = created.json as { apiKey: string };
  const client = createGitClient({ baseUrl: server.urls.git!, token: apiKey });
  let count = 0;
  return {
    name: "platform gateway",
    async newRepository() {
      const { body } = await client.createRepository({ body: { name: `r${count++}` } });
      return `${server.urls.git!.replace("http://", `http://x:${apiKey}@`)}/${body.repo_id}.git`;
    },
    async stop() {
      await server.stop();
    },
  };
}

/** A repository of about 50 MB: 25 commits, each adding two incompressible 1 MiB files. */
async function buildSource(dir: string, home: string): Promise<void> {
  await run("git", ["init", "-q", "-b", "main", dir]);
  for (let commit = 0; commit < 25; commit++) {
    await mkdir(join(dir, `part${commit}`), { recursive: true });
    for (let file = 0; file < 2; file++) await writeFile(join(dir, `part${commit}`, `f${file}.bin`), randomBytes(MiB));
    await writeFile(join(dir, "CHANGELOG"), `${commit}\n`, { flag: "a" });
    await run("git", ["-C", dir, "add", "."], { env: env(home) });
    await run("git", ["-C", dir, "commit", "-qm", `part ${commit}`], { env: env(home) });
  }
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), "bench-git-home-"));
  const source = join(home, "source");
  await buildSource(source, home);
  const remotes = [await startHttpBackend(), await startGateway()];
  const operations = ["push 50 MB", "clone 50 MB", "no-op fetch", "one-commit push"] as const;
  const times = new Map(remotes.map((r) => [r.name, new Map(operations.map((o) => [o, [] as number[]]))]));
  const git = (args: string[], cwd?: string) => run("git", args, { cwd, env: env(home), maxBuffer: 64 * MiB });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const remote of round % 2 === 0 ? remotes : [...remotes].reverse()) {
        const record = (operation: (typeof operations)[number], seconds: number) =>
          times.get(remote.name)!.get(operation)!.push(seconds);
        const url = await remote.newRepository();
        record("push 50 MB", await timed(() => git(["-C", source, "push", "-q", url, "main"])));
        const clone = join(home, `clone-${round}-${remote.name.replace(/\W/g, "")}`);
        record("clone 50 MB", await timed(() => git(["clone", "-q", url, clone])));
        record("no-op fetch", await timed(() => git(["-C", clone, "fetch", "-q", "origin"])));
        await writeFile(join(clone, "one.txt"), `${round}\n`);
        await git(["-C", clone, "add", "one.txt"]);
        await git(["-C", clone, "commit", "-qm", "one"]);
        record("one-commit push", await timed(() => git(["-C", clone, "push", "-q", "origin", "main"])));
        await rm(clone, { recursive: true, force: true });
      }
    }
  } finally {
    await Promise.all(remotes.map((r) => r.stop()));
    await rm(home, { recursive: true, force: true });
  }
  const [baseline, gateway] = remotes.map((r) => times.get(r.name)!);
  console.log(`git CLI over HTTP on loopback, ${ROUNDS} interleaved rounds, median seconds`);
  console.log(`| Operation | ${remotes[0]!.name} | ${remotes[1]!.name} | ratio |\n|---|---|---|---|`);
  for (const operation of operations) {
    const theirs = median(baseline!.get(operation)!);
    const ours = median(gateway!.get(operation)!);
    console.log(`| ${operation} | ${theirs.toFixed(3)} | ${ours.toFixed(3)} | ${(ours / theirs).toFixed(2)} |`);
  }
}

await main();
