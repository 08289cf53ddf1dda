import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { S3Client } from "@aws-sdk/client-s3";
import postgres from "postgres";
import { s3Credentials, type PlatformClient } from "../../sdk/src/index.js";

/** The repository root and the binary, exactly as a user runs it. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const binary = join(repoRoot, "server/bin/platform-server.js");

export interface StartedServer {
  /** Base URLs by plane, from the binary's ready line. */
  readonly urls: Readonly<Record<string, string>>;
  readonly dataDir: string;
  /** DATABASE_URL the server uses, when it runs on PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** Every log line the server wrote to stderr so far. */
  readonly logs: string[];
  readonly process: ChildProcess;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
  /**
   * Stops the process, runs `whileDown` (the embedded database admits one process at a time), and
   * starts the binary again with the same arguments, data directory and database, so the same
   * secret key. The server answered replaces this one: stop that one instead.
   */
  restart(whileDown?: () => Promise<void>): Promise<StartedServer>;
}

/**
 * Starts `platform-server serve` on free ports with a fresh data directory, on the embedded
 * database, or on a fresh database of TEST_DATABASE_URL's server when that is set.
 * SERVER_NODE_FLAGS adds Node.js flags to the server's command line (a bench profiling the
 * server: `SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"`).
 */
export async function startPlatformServer(
  extraArgs: string[] = [],
  { dataDir, database, env = {} }: { dataDir?: string; database?: TestPostgresDatabase; env?: NodeJS.ProcessEnv } = {},
): Promise<StartedServer> {
  dataDir ??= await mkdtemp(join(tmpdir(), "platform-e2e-"));
  database ??= await freshDatabase();
  const nodeFlags = (process.env.SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      binary,
      "serve",
      "--data-dir",
      dataDir,
      "--api-port",
      "0",
      "--data-port",
      "0",
      "--git-port",
      "0",
      "--git-ssh-port",
      "0",
      "--registry-port",
      "0",
      "--identity-port",
      "0",
      "--s3-port",
      "0",
      ...extraArgs,
    ],
    { env: { ...process.env, ...env, DATABASE_URL: database?.url ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const logs: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => logs.push(line));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const urls = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 60 s; logs:\n${logs.join("\n")}`)), 60_000);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const parsed = JSON.parse(line) as { ready?: boolean } & Record<string, string>;
      if (parsed.ready) {
        clearTimeout(timer);
        const { ready: _ready, ...rest } = parsed;
        resolve(rest);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was ready; logs:\n${logs.join("\n")}`));
    });
  });
  return {
    urls,
    dataDir,
    databaseUrl: database?.url,
    logs,
    process: child,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const code = await exited;
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
      return code;
    },
    async restart(whileDown) {
      if (child.exitCode === null) child.kill("SIGTERM");
      const code = await exited;
      if (code !== 0) throw new Error(`the server exited with ${code} on SIGTERM; logs:\n${logs.join("\n")}`);
      await whileDown?.();
      return startPlatformServer(extraArgs, { dataDir, database, env });
    },
  };
}

export interface TestPostgresDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A new database on TEST_DATABASE_URL's server, or undefined to use the embedded one. */
export async function freshDatabase(): Promise<TestPostgresDatabase | undefined> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return undefined;
  const name = `e2e_${randomBytes(6).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = postgres(serverUrl, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/** Runs `platform-server admin ...` against a data directory and returns its JSON output. */
export async function runAdmin(
  dataDir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; json: unknown; stderr: string }> {
  const child = spawn(process.execPath, [binary, "admin", ...args, "--data-dir", dataDir], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, json: stdout.trim() === "" ? undefined : JSON.parse(stdout), stderr };
}

/**
 * An S3 client of a server's S3 listener, as a new `data.editor` key of the organization: the S3
 * signature needs a key's secret, which only issuing a key gives.
 */
export async function s3ClientFor(s3Url: string, client: PlatformClient, orgId: string): Promise<S3Client> {
  const issued = await client.iam.createApiKey({ orgId, name: "s3", roles: ["data.editor"] });
  return new S3Client({
    endpoint: s3Url,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: await s3Credentials(issued.apiKey!.keyId, issued.secret),
    maxAttempts: 1,
  });
}
