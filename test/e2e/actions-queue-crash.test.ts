import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterEach, expect, it } from "vitest";
import { createPlatformClient } from "../../sdk/src/index.js";
import {
  freshDatabase,
  runAdmin,
  s3ClientFor,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// kill -9 of the server in the middle of a queued action run: after a restart on the same data,
// the run is taken over once its lease lapses, resumes the thread it had, and ends once, with one
// terminal manifest. A server stopped with SIGTERM gives the run back, with the same outcome.
let dataDir: string;
let database: TestPostgresDatabase | undefined;
let server: StartedServer | undefined;
afterEach(async () => {
  if (server?.process.exitCode === null) await server.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Enough text that embedding it into a collection takes a while: the run is killed mid-way. */
const bigText = Array.from(
  { length: 6000 },
  (_, i) => `Entry ${i}: the ledger records shipment ${i * 7} of crate ${i % 97} to harbour ${i % 13}.`,
).join("\n");

interface ActiveRun {
  runId: string;
  phase: string;
  threadId: string;
}
interface Manifest {
  runId: string;
  status: string;
  threadId: string;
}

it.each([
  ["killed (kill -9)", "SIGKILL"],
  ["stopped (SIGTERM)", "SIGTERM"],
] as const)(
  "ends a queued run once after the server is %s in the middle of it",
  async (_how, signal) => {
    dataDir = await mkdtemp(join(tmpdir(), "platform-actions-crash-"));
    database = await freshDatabase();
    // The queue's lease is the thread lease: a dead process's runs are taken over 2 s after it died.
    // The template's per-batch expressions scan every chunk: room for them on a busy test machine.
    const lease = ["--thread-lease-ms", "2000", "--expression-time-limit-ms", "1000"];
    server = await startPlatformServer(lease, { dataDir, database });
    const org = await runAdmin(dataDir, ["create-org", "actionco"]);
    const { apiKey, organization } = org.json as { apiKey: string; organization: { id: string } };
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    const data = async <T>(path: string, body: unknown): Promise<T> => {
      const response = await fetch(`${server!.urls.data}${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as T;
      if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };

    const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "actionco" });
    const s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
    await s3.send(new CreateBucketCommand({ Bucket: "ledger" }));
    await s3.send(new PutObjectCommand({ Bucket: "ledger", Key: "big.txt", Body: bigText, ContentType: "text/plain" }));
    s3.destroy();
    // The collection the action embeds into: a text collection of the bucket.
    await data("/ledger/pipelines/vector", { name: "ledger", templateId: "text_embedding_index" });

    const { runId } = await data<{ runId: string }>("/actions/enqueue", {
      selection: { pillar: "objects", objectSingle: { bucket: "ledger", key: "big.txt" } },
      actionId: "embed_into_collection",
      params: { collection: "ledger" },
    });
    const active = () => data<{ runs: ActiveRun[] }>("/actions/runs/active", { bucket: "ledger" });

    // Stop the server once the run executes on its thread.
    let before: ActiveRun | undefined;
    for (let i = 0; ; i++) {
      before = (await active()).runs.find((run) => run.runId === runId);
      if (before?.phase === "ACTIVE_RUN_PHASE_RUNNING" && before.threadId !== "") break;
      if (!before) throw new Error("the run ended before the server could be stopped: make the input larger");
      if (i > 1500) throw new Error(`the run never started: ${JSON.stringify(before)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const exited = new Promise<number | null>((resolve) => server!.process.once("exit", resolve));
    server.process.kill(signal);
    if (signal === "SIGTERM") expect(await exited).toBe(0);
    else await exited;
    server = await startPlatformServer(lease, { dataDir, database });

    for (let i = 0; ; i++) {
      if (!(await active()).runs.some((run) => run.runId === runId)) break;
      if (i > 1200) throw new Error("the run did not end after the restart");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // One manifest for the run, terminal and completed, on the thread it had before the kill.
    const { runs } = await data<{ runs: Manifest[] }>("/actions/runs/list", { bucket: "ledger", limit: 100 });
    const manifests = runs.filter((run) => run.runId === runId);
    expect(manifests).toHaveLength(1);
    expect(manifests[0]).toMatchObject({ status: "ACTION_RUN_STATUS_COMPLETED", error: "", threadId: before.threadId });

    // The watch replays it: started, then one completed, nothing failed.
    const watched = await fetch(`${server.urls.data}/actions/runs/watch`, {
      method: "POST",
      headers,
      body: JSON.stringify({ runId, bucket: "ledger" }),
    });
    expect(watched.status).toBe(200);
    const lines = (await watched.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(Object.keys(lines[0]!)).toEqual(["started"]);
    expect(lines.filter((line) => "completed" in line)).toHaveLength(1);
    expect(lines.filter((line) => "failed" in line)).toHaveLength(0);
    expect(Object.keys(lines.at(-1)!)).toEqual(["completed"]);
  },
  240_000,
);

// Two server processes on one PostgreSQL database: whichever executes a queued run, a watch on
// either process follows it to its end, the other one through the database.
it.runIf(process.env.TEST_DATABASE_URL)(
  "follows a queued run from both processes of a two-process deployment",
  async () => {
    dataDir = await mkdtemp(join(tmpdir(), "platform-actions-replicas-"));
    database = await freshDatabase();
    // Same database, secret key and object store, each its own data directory: how replicas run.
    const shared = [
      "--secret-key",
      randomBytes(32).toString("base64"),
      "--blob-dir",
      join(dataDir, "blobs"),
      "--expression-time-limit-ms",
      "1000",
    ];
    const keep = { url: database!.url, drop: async () => {} };
    server = await startPlatformServer(shared, { dataDir: join(dataDir, "a"), database: keep });
    const other = await startPlatformServer(shared, { dataDir: join(dataDir, "b"), database: keep });
    try {
      const org = await runAdmin(join(dataDir, "a"), ["create-org", "replicaco"]);
      const { apiKey, organization } = org.json as { apiKey: string; organization: { id: string } };
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
      const post = (base: string, path: string, body: unknown) =>
        fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "replicaco" });
      const s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
      await s3.send(new CreateBucketCommand({ Bucket: "ledger" }));
      await s3.send(
        new PutObjectCommand({ Bucket: "ledger", Key: "big.txt", Body: bigText, ContentType: "text/plain" }),
      );
      s3.destroy();
      expect(
        (
          await post(server.urls.data!, "/ledger/pipelines/vector", {
            name: "ledger",
            templateId: "text_embedding_index",
          })
        ).status,
      ).toBe(200);

      const enqueued = await post(server.urls.data!, "/actions/enqueue", {
        selection: { pillar: "objects", objectSingle: { bucket: "ledger", key: "big.txt" } },
        actionId: "embed_into_collection",
        params: { collection: "ledger" },
      });
      const { runId } = (await enqueued.json()) as { runId: string };
      const watch = async (base: string) => {
        const answer = await post(base, "/actions/runs/watch", { runId, bucket: "ledger" });
        expect(answer.status).toBe(200);
        return (await answer.text())
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, { threadId?: string }>);
      };
      const [onA, onB] = await Promise.all([watch(server.urls.data!), watch(other.urls.data!)]);
      for (const lines of [onA, onB]) {
        expect(Object.keys(lines[0]!)).toEqual(["started"]);
        expect(Object.keys(lines.at(-1)!)).toEqual(["completed"]);
        expect(lines.filter((line) => "completed" in line || "failed" in line)).toHaveLength(1);
      }
      expect(onB[0]!.started!.threadId).toBe(onA[0]!.started!.threadId);
      // The same progress, whether from the executing worker or from the thread through the database.
      const progress = (lines: Record<string, unknown>[]) => lines.filter((line) => "progress" in line);
      expect(progress(onA).length).toBeGreaterThan(0);
      expect(progress(onB)).toEqual(progress(onA));
    } finally {
      await other.stop();
    }
  },
  240_000,
);
