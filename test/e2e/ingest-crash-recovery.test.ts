import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, expect, it } from "vitest";
import { createPlatformClient } from "../../sdk/src/index.js";
import {
  freshDatabase,
  runAdmin,
  s3ClientFor,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// kill -9 of the server in the middle of an ingest job: after a restart on the same data, the job
// finishes, every object is ingested, and no object's chunks are doubled.
let dataDir: string;
let database: TestPostgresDatabase | undefined;
let server: StartedServer | undefined;
afterAll(async () => {
  if (server?.process.exitCode === null) await server.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const OBJECTS = 8;
const paragraph = (i: number) =>
  Array.from(
    { length: 12 },
    (_, j) => `Document ${i}, paragraph ${j}: the archive keeps record ${i * 100 + j} of the ledger.`,
  ).join("\n");

interface Job {
  status: string;
  objectsTotal: string;
  objectsSucceeded: string;
  objectsFailed: string;
}

it("finishes an ingest job after the server is killed, without doubling any chunk", async () => {
  dataDir = await mkdtemp(join(tmpdir(), "platform-ingest-crash-"));
  database = await freshDatabase();
  const lease = ["--thread-lease-ms", "2000"];
  server = await startPlatformServer(lease, { dataDir, database });
  const org = await runAdmin(dataDir, ["create-org", "ingestco"]);
  const { apiKey, organization } = org.json as { apiKey: string; organization: { id: string } };
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const data = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server!.urls.data}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json()) as T;
    if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };

  const client = createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: "ingestco" });
  const s3 = await s3ClientFor(server.urls.s3!, client, organization.id);
  await s3.send(new CreateBucketCommand({ Bucket: "ledger" }));
  for (let i = 0; i < OBJECTS; i++) {
    await s3.send(
      new PutObjectCommand({ Bucket: "ledger", Key: `docs/${i}.txt`, Body: paragraph(i), ContentType: "text/plain" }),
    );
  }
  s3.destroy();
  const { pipelineId } = await data<{ pipelineId: string }>("POST", "/ledger/pipelines/vector", {
    name: "ledger",
    templateId: "text_embedding_index",
    templateInputs: { chunk_size: 300, chunk_overlap: 0 },
  });
  const { ruleId } = await data<{ ruleId: string }>("POST", "/ledger/rules", {
    pipelineId,
    trigger: "RULE_TRIGGER_MANUAL",
  });
  const { jobId } = await data<{ jobId: string }>("POST", "/ledger/ingest/jobs", { ruleId });

  // Kill once some objects are in and others are not.
  for (let i = 0; ; i++) {
    const job = await data<Job>("GET", `/ledger/ingest/jobs/${jobId}`);
    if (Number(job.objectsSucceeded) >= 1) {
      expect(Number(job.objectsSucceeded)).toBeLessThan(OBJECTS);
      break;
    }
    if (i > 600) throw new Error(`the job never started: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  server.process.kill("SIGKILL");
  await new Promise((resolve) => server!.process.once("exit", resolve));
  server = await startPlatformServer(lease, { dataDir, database });

  let job: Job;
  for (let i = 0; ; i++) {
    job = await data<Job>("GET", `/ledger/ingest/jobs/${jobId}`);
    if (!["INGEST_JOB_STATUS_QUEUED", "INGEST_JOB_STATUS_RUNNING"].includes(job.status)) break;
    if (i > 1200) throw new Error(`the job did not finish after the restart: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(job).toMatchObject({
    status: "INGEST_JOB_STATUS_SUCCEEDED",
    objectsTotal: String(OBJECTS),
    objectsSucceeded: String(OBJECTS),
    objectsFailed: "0",
  });

  // Every object holds exactly its chunks, once each.
  for (let i = 0; i < OBJECTS; i++) {
    const { results } = await data<{ results: { chunkId: string; metadata: Record<string, string> }[] }>(
      "POST",
      "/ledger/vector/search",
      {
        collectionName: "ledger",
        text: `record ${i * 100} ledger`,
        topK: 100,
        preFilter: { filters: [{ field: "source_key", op: "FILTER_OP_EQ", value: `docs/${i}.txt` }] },
      },
    );
    const total = Number(results[0]!.metadata.chunk_total);
    expect(total).toBeGreaterThan(1);
    expect(results).toHaveLength(total);
    expect(new Set(results.map((r) => r.metadata.chunk_index)).size).toBe(total);
  }
}, 240_000);
