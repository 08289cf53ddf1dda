import { randomBytes } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { callData, createOrganization, okData, s3ClientOf, type TestOrganization } from "./shared-server.js";

// The data platform's whole path through the binary: objects uploaded with the AWS SDK, a vector
// collection from the text template, a rule binding the bucket to it, ingest jobs, search in each
// mode, a changed and a deleted object, and another organization seeing none of it.

interface Job {
  jobId: string;
  status: string;
  objectsTotal: string;
  objectsSucceeded: string;
  objectsFailed: string;
  errorMessage: string;
}

interface SearchAnswer {
  results: {
    object: { key: string };
    score: number;
    content?: string;
    metadata: Record<string, string>;
    chunkId?: string;
  }[];
  searchModeUsed: string;
  warnings: string[];
  tookMs: string;
  collectionStatuses: { collection: string; searchCompleted: boolean; failReason: string }[];
}

async function settled(org: TestOrganization, bucket: string, jobId: string): Promise<Job> {
  for (let i = 0; ; i++) {
    const job = await okData<Job>(callData(org, "GET", `/${bucket}/ingest/jobs/${jobId}`));
    if (!["INGEST_JOB_STATUS_QUEUED", "INGEST_JOB_STATUS_RUNNING"].includes(job.status)) return job;
    if (i > 600) throw new Error(`job ${jobId} did not finish: ${JSON.stringify(job)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the bucket's newest job after `known` has finished, and answers it. */
async function nextJob(org: TestOrganization, bucket: string, known: ReadonlySet<string>): Promise<Job> {
  for (let i = 0; ; i++) {
    const { jobs } = await okData<{ jobs: Job[] }>(callData(org, "GET", `/${bucket}/ingest/jobs`));
    const fresh = jobs.find((job) => !known.has(job.jobId));
    if (fresh) return settled(org, bucket, fresh.jobId);
    if (i > 300) throw new Error("no new ingest job appeared");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const search = (org: TestOrganization, bucket: string, body: Record<string, unknown>) =>
  callData<SearchAnswer>(org, "POST", `/${bucket}/vector/search`, body);

let acme: TestOrganization;
let other: TestOrganization;
let s3: S3Client;
const bucket = `kb-${randomBytes(3).toString("hex")}`;
let pipelineId = "";
let ruleId = "";
let firstJob: Job;

const shipping = `# Shipping
Orders ship within two business days from our warehouse in Lyon.
Express delivery is available in the EU and the UK for an extra fee.`;
const returns = `Returns policy: unworn items can be returned within thirty days for a full refund.
Refunds go back to the original payment card within a week.`;
const page = `<html><head><style>body{color:red}</style><script>var tracking = 1</script></head>
<body><h1>Warranty</h1><p>Every kettle carries a two year warranty covering the heating element.</p></body></html>`;

beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("data"), createOrganization("data-other")]);
  s3 = await s3ClientOf(acme);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const put = (Key: string, Body: string, ContentType: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body, ContentType }));
  await Promise.all([
    put("docs/shipping.md", shipping, "text/markdown"),
    put("docs/returns.txt", returns, "text/plain"),
    put("docs/warranty.html", page, "text/html"),
    put("private/salaries.txt", "not for the collection", "text/plain"),
  ]);
}, 60_000);

describe("the data platform, end to end", () => {
  it("creates a collection from the text template and binds the bucket to it", async () => {
    const pipeline = await okData<{
      pipelineId: string;
      name: string;
      destination: { name: string; vector: { dimensions: number; embedModel: string } };
    }>(callData(acme, "POST", `/${bucket}/pipelines/vector`, { name: "support", templateId: "text_embedding_index" }));
    expect(pipeline).toMatchObject({
      name: "text_embedding_index",
      destination: { name: "support", vector: { dimensions: 768 } },
    });
    pipelineId = pipeline.pipelineId;
    const rule = await okData<{ ruleId: string; binding: string }>(
      callData(acme, "POST", `/${bucket}/rules`, { pipelineId, filter: { prefix: "docs/" } }),
    );
    expect(rule.binding).toContain("text_embedding_index (vector: support)");
    ruleId = rule.ruleId;
  });

  it("ingests the rule's objects through a durable job", async () => {
    const job = await okData<Job>(callData(acme, "POST", `/${bucket}/ingest/jobs`, { ruleId }));
    expect(job.status).toBe("INGEST_JOB_STATUS_QUEUED");
    firstJob = await settled(acme, bucket, job.jobId);
    expect(firstJob).toMatchObject({
      status: "INGEST_JOB_STATUS_SUCCEEDED",
      objectsTotal: "3",
      objectsSucceeded: "3",
      objectsFailed: "0",
    });
  }, 120_000);

  it("finds the right object for a text query, with content and metadata", async () => {
    const answer = await okData(
      search(acme, bucket, {
        collectionName: "support",
        text: "how long until my order ships",
        topK: 3,
        includeContent: true,
      }),
    );
    expect(answer.searchModeUsed).toBe("vector");
    expect(answer.results[0]!.object.key).toBe("docs/shipping.md");
    expect(answer.results[0]!.content).toContain("two business days");
    expect(answer.results[0]!.metadata).toMatchObject({ source_key: "docs/shipping.md", mime_type: "text/markdown" });
    expect(answer.results.map((r) => r.object.key)).not.toContain("private/salaries.txt");
    // HTML is read for its visible text: no script, no style.
    const warranty = await okData(
      search(acme, bucket, { text: "kettle warranty heating element", topK: 1, includeContent: true }),
    );
    expect(warranty.results[0]!.object.key).toBe("docs/warranty.html");
    expect(warranty.results[0]!.content).not.toContain("tracking");
  });

  it("filters on metadata before ranking, and names what it cannot do", async () => {
    const filtered = await okData(
      search(acme, bucket, {
        text: "orders ship",
        topK: 10,
        preFilter: { filters: [{ field: "source_key", op: "FILTER_OP_EQ", value: "docs/returns.txt" }] },
      }),
    );
    expect(filtered.results.length).toBeGreaterThan(0);
    expect(new Set(filtered.results.map((r) => r.object.key))).toEqual(new Set(["docs/returns.txt"]));

    const hybrid = await okData(search(acme, bucket, { text: "refund", searchMode: "SEARCH_MODE_HYBRID", topK: 2 }));
    expect(hybrid.results.length).toBeGreaterThan(0);
    expect(hybrid.warnings.join(" ")).toMatch(/sparse|BM25|hybrid/i);

    const wrongLength = await search(acme, bucket, {
      collectionName: "support",
      vector: { values: [0.1, 0.2] },
      topK: 2,
    });
    expect(wrongLength.status).toBe(400);
    expect(JSON.stringify(wrongLength.body)).toMatch(/768/);
  });

  it("fans a bucket-wide query out to compatible collections only, and shows the engine with its collections", async () => {
    // A second collection with other dimensions: never fused with the first.
    await okData(
      callData(acme, "POST", `/${bucket}/pipelines/vector`, { name: "snippets", templateId: "code_embedding_index" }),
    );
    const fanned = await okData(search(acme, bucket, { text: "orders ship", topK: 5 }));
    expect(fanned.results[0]!.object.key).toBe("docs/shipping.md");
    const statuses = Object.fromEntries(fanned.collectionStatuses.map((s) => [s.collection, s]));
    expect(statuses.support).toMatchObject({ searchCompleted: true, failReason: "" });
    expect(statuses.snippets?.searchCompleted).toBe(false);
    expect(statuses.snippets?.failReason).not.toBe("");

    const engine = await okData<{
      status: string;
      collections: { name: string; materialized: boolean; dimensions: number }[];
    }>(callData(acme, "GET", `/${bucket}/vector`));
    expect(engine.status).toBe("ACTIVE");
    expect(engine.collections).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "support", materialized: true, dimensions: 768, pipelineId }),
        expect.objectContaining({ name: "snippets", materialized: false, dimensions: 1024 }),
      ]),
    );
  });

  it("re-ingests a changed object, replacing its chunks, and drops a deleted object's", async () => {
    const known = new Set([firstJob.jobId]);
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: "docs/shipping.md",
        Body: "Shipping update: parcels now travel by drone and arrive the next morning.",
        ContentType: "text/markdown",
      }),
    );
    const changed = await nextJob(acme, bucket, known);
    expect(changed.status).toBe("INGEST_JOB_STATUS_SUCCEEDED");
    known.add(changed.jobId);
    const onlyShipping = { filters: [{ field: "source_key", op: "FILTER_OP_EQ", value: "docs/shipping.md" }] };
    const after = await okData(
      search(acme, bucket, { text: "drone", topK: 10, includeContent: true, preFilter: onlyShipping }),
    );
    expect(after.results.map((r) => r.content).join(" ")).toContain("drone");
    expect(after.results.map((r) => r.content).join(" ")).not.toContain("two business days");

    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "docs/returns.txt" }));
    const deleted = await nextJob(acme, bucket, known);
    expect(deleted.status).toBe("INGEST_JOB_STATUS_SUCCEEDED");
    const gone = await okData(
      search(acme, bucket, {
        text: "refund",
        topK: 10,
        preFilter: { filters: [{ field: "source_key", op: "FILTER_OP_EQ", value: "docs/returns.txt" }] },
      }),
    );
    expect(gone.results).toEqual([]);
  }, 120_000);

  it("shows another organization none of the bucket's pipelines, jobs or objects", async () => {
    expect((await callData(other, "GET", `/${bucket}/pipelines/${pipelineId}`)).status).toBe(404);
    expect((await callData(other, "GET", `/${bucket}/ingest/jobs/${firstJob.jobId}`)).status).toBe(404);
    expect((await callData(other, "GET", `/${bucket}/rules/${ruleId}`)).status).toBe(404);
    const stranger = await search(other, bucket, { text: "shipping", topK: 3 });
    expect(stranger.status).toBe(404);
    const peek = await s3ClientOf(other);
    const error = await peek
      .send(new GetObjectCommand({ Bucket: bucket, Key: "docs/shipping.md" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3ServiceException);
    expect((error as S3ServiceException).name).toBe("NoSuchBucket");
  });
});
