import { randomUUID } from "node:crypto";
import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  IngestJobSchema,
  IngestJobStatus,
  IngestRuleSchema,
  RuleTrigger,
  SyncRunSchema,
  SyncState,
  SyncStatusSchema,
} from "../../../../gen/platform/data/ingest/v1/ingest_pb.js";
import {
  CreateRuleRequestSchema,
  GetIngestStatusRequestSchema,
  GetSyncStatusRequestSchema,
  IngestService,
  ListIngestJobsRequestSchema,
  ListIngestJobsResponseSchema,
  RetryIngestJobRequestSchema,
  TriggerIngestRequestSchema,
  TriggerIngestionRequestSchema,
} from "../../../../gen/platform/data/ingest/v1/ingest_service_pb.js";
import { principalKey } from "../../auth/principal.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import { createIngestService } from "./ingest-handlers.js";
import type {
  PipelineTarget,
  SourceDirectory,
  SourceObject,
  TemplateRunner,
  VectorChunk,
  VectorSink,
} from "./ingest-ports.js";
import { createIngestWorker, type IngestWorker } from "./ingest-worker.js";
import { createJobStore } from "./job-store.js";

/** One bucket's objects, as the internal source lists and reads them. */
class FakeBucket {
  readonly objects = new Map<string, { text: string; contentType: string; version: number }>();
  put(key: string, text: string, contentType = "text/plain") {
    const version = (this.objects.get(key)?.version ?? 0) + 1;
    this.objects.set(key, { text, contentType, version });
  }
}

const DIMENSIONS = 4;
const target = {
  collectionName: "papers",
  physicalName: "vc_test",
  dimensions: DIMENSIONS,
  embedModel: "fake",
  chunkSize: 10,
  chunkOverlap: 0,
  templateInputs: {},
  enableBm25: false,
};

let database: TestDatabase;
const buckets = new Map<string, FakeBucket>();
const pipelines = new Map<string, PipelineTarget>();
/** Stored chunks by `<org>/<key>`. */
const stored = new Map<string, readonly VectorChunk[]>();
let runs = 0;
let failNextRuns = 0;

const sources: SourceDirectory = {
  exists: async (_org, _bucket, id) => id === INTERNAL,
  internalSourceId: async () => INTERNAL,
  reader: async (orgId, bucket) => {
    const objects = buckets.get(`${orgId}/${bucket}`) ?? new FakeBucket();
    return {
      async *list(prefix: string): AsyncIterable<SourceObject> {
        for (const [key, o] of objects.objects)
          if (key.startsWith(prefix))
            yield { key, etag: `v${o.version}`, size: o.text.length, contentType: o.contentType };
      },
      async read(key: string) {
        const o = objects.objects.get(key);
        if (!o) throw new Error(`${key} does not exist`);
        return { bytes: new TextEncoder().encode(o.text), contentType: o.contentType, etag: `v${o.version}` };
      },
    };
  },
};
const INTERNAL = randomUUID();

const vectors: VectorSink = {
  async replaceObject(orgId, _bucket, _target, key, chunks) {
    stored.set(`${orgId}/${key}`, chunks);
  },
  async deleteObject(orgId, _bucket, _target, key) {
    stored.delete(`${orgId}/${key}`);
  },
};

/** Chunks the text by `chunk_size` characters and embeds each chunk as its first character codes. */
const outputs = new Map<string, JsonObject>();
const runner: TemplateRunner = {
  async start(_orgId, _templateId, input) {
    runs++;
    const id = randomUUID();
    const text = String(input.text);
    const size = Number(input.chunk_size);
    const vectorsOut = [];
    for (let i = 0; i * size < text.length; i++) {
      const content = text.slice(i * size, (i + 1) * size);
      vectorsOut.push({
        id: `${String(input.source_key)}#${i}`,
        values: [...content.padEnd(DIMENSIONS)].slice(0, DIMENSIONS).map((c) => c.charCodeAt(0)),
        content,
        metadata: { source_key: String(input.source_key), chunk_index: i },
      });
    }
    outputs.set(id, failNextRuns-- > 0 ? { broken: true } : { vectors: vectorsOut });
    return id;
  },
  async output(_orgId, threadId) {
    const output = outputs.get(threadId)!;
    if (output.broken) throw new Error("the pipeline's script did not complete: the endpoint answered 503");
    return output;
  },
};

let worker: IngestWorker;
/** A worker of this process, as a server starts one. */
function startWorker(): IngestWorker {
  const started = createIngestWorker({
    db: database.db,
    pipelines: { getPipeline: async (_org, _bucket, id) => pipelines.get(id) },
    sources,
    vectors,
    runner,
    leaseMs: 5_000,
    maxObjectBytes: 1 << 20,
    pollMs: 50,
    log: () => {},
  });
  started.start();
  return started;
}
const service = () =>
  createIngestService({
    db: database.db,
    pipelines: {
      getPipeline: async (_org, bucket, id) => (pipelines.get(id)?.bucket === bucket ? pipelines.get(id) : undefined),
    },
    sources,
    wake: () => worker.wake(),
  });
let ingest: ReturnType<typeof service>;

beforeAll(async () => {
  database = await openTestDatabase();
  ingest = service();
  worker = startWorker();
});
afterAll(async () => {
  await worker.stop();
  await database.close();
});

async function tenant() {
  const orgId = await database.createOrganization();
  const bucket = new FakeBucket();
  buckets.set(`${orgId}/docs`, bucket);
  const pipelineId = randomUUID();
  pipelines.set(pipelineId, {
    pipelineId,
    bucket: "docs",
    templateId: "text_embedding_index",
    destinationName: "papers",
    facet: "vector",
    vector: target,
  });
  const context = createHandlerContext({
    service: IngestService,
    method: IngestService.method.createRule,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/",
    contextValues: createContextValues().set(principalKey, {
      orgId,
      orgName: "o",
      keyId: "k",
      roles: new Set<string>(),
    }),
  });
  const call = async <I extends DescMessage, O extends DescMessage>(
    method: (request: MessageShape<I>, ctx: typeof context) => unknown,
    input: I,
    output: O,
    init: MessageInitShape<I>,
  ): Promise<MessageShape<O>> => create(output, (await method(create(input, init), context)) as MessageInitShape<O>);
  return { orgId, bucket, pipelineId, context, call };
}

async function settled(t: Awaited<ReturnType<typeof tenant>>, jobId: string) {
  for (;;) {
    const job = await t.call(ingest.getIngestStatus, GetIngestStatusRequestSchema, IngestJobSchema, {
      bucket: "docs",
      jobId,
    });
    if (job.status !== IngestJobStatus.QUEUED && job.status !== IngestJobStatus.RUNNING) return job;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function errorOf(work: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await work();
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected an error");
}

describe("ingest rules", () => {
  it("bind a source to a pipeline, and refuse what does not exist or does not parse", async () => {
    const t = await tenant();
    const rule = await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
    });
    expect(rule).toMatchObject({
      sourceId: INTERNAL,
      trigger: RuleTrigger.ON_CHANGE,
      binding: "papers -> text_embedding_index (vector: papers)",
    });

    const unknown = await errorOf(() =>
      t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
        bucket: "docs",
        pipelineId: randomUUID(),
      }),
    );
    expect(unknown.code).toBe(Code.NotFound);
    const badCron = await errorOf(() =>
      t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
        bucket: "docs",
        pipelineId: t.pipelineId,
        trigger: RuleTrigger.SCHEDULE,
        scheduleCron: "61 * * * *",
      }),
    );
    expect([badCron.code, badCron.rawMessage]).toEqual([
      Code.InvalidArgument,
      expect.stringContaining("schedule_cron"),
    ]);
    const badType = await errorOf(() =>
      t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
        bucket: "docs",
        pipelineId: t.pipelineId,
        filter: { contentTypes: ["pdf"] },
      }),
    );
    expect(badType.rawMessage).toContain("filter.content_types[0]");

    // Another organization sees nothing of this one.
    const other = await tenant();
    const crossed = await errorOf(() =>
      other.call(ingest.getIngestStatus, GetIngestStatusRequestSchema, IngestJobSchema, {
        bucket: "docs",
        jobId: rule.ruleId,
      }),
    );
    expect(crossed.code).toBe(Code.NotFound);
  });
});

describe("ingest jobs", () => {
  it("ingest every object, skip unchanged ones, replace changed ones' chunks and drop deleted ones'", async () => {
    const t = await tenant();
    t.bucket.put("a.txt", "abcdefghijklmnopqrstuvwxyz");
    t.bucket.put("b.md", "# title");
    const rule = await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
      trigger: RuleTrigger.MANUAL,
    });
    const first = await t.call(ingest.triggerIngest, TriggerIngestRequestSchema, IngestJobSchema, {
      bucket: "docs",
      ruleId: rule.ruleId,
    });
    expect(await settled(t, first.jobId)).toMatchObject({
      status: IngestJobStatus.SUCCEEDED,
      objectsTotal: 2n,
      objectsSucceeded: 2n,
    });
    expect(stored.get(`${t.orgId}/a.txt`)?.map((c) => c.id)).toEqual(["a.txt#0", "a.txt#1", "a.txt#2"]);

    // Unchanged: listed as nothing to do.
    const runsBefore = runs;
    const second = await t.call(ingest.triggerIngest, TriggerIngestRequestSchema, IngestJobSchema, {
      bucket: "docs",
      ruleId: rule.ruleId,
    });
    expect(await settled(t, second.jobId)).toMatchObject({ status: IngestJobStatus.SUCCEEDED, objectsTotal: 0n });
    expect(runs).toBe(runsBefore);

    // Changed and deleted, through a sync of the source.
    t.bucket.put("a.txt", "short");
    t.bucket.objects.delete("b.md");
    const sync = await t.call(ingest.triggerIngestion, TriggerIngestionRequestSchema, SyncRunSchema, {
      bucket: "docs",
      sourceId: INTERNAL,
    });
    expect(sync.state).toBe(SyncState.QUEUED);
    let status;
    do {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await t.call(ingest.getSyncStatus, GetSyncStatusRequestSchema, SyncStatusSchema, {
        bucket: "docs",
        sourceId: INTERNAL,
      });
    } while (status.lastIngestion?.state !== SyncState.SUCCEEDED);
    expect(status.lastIngestion).toMatchObject({ objectsDiscovered: 1n, jobsStarted: 1n });
    const { jobs } = await t.call(ingest.listIngestJobs, ListIngestJobsRequestSchema, ListIngestJobsResponseSchema, {
      bucket: "docs",
    });
    const latest = jobs[0]!;
    expect(await settled(t, latest.jobId)).toMatchObject({ status: IngestJobStatus.SUCCEEDED, objectsTotal: 2n });
    expect(stored.get(`${t.orgId}/a.txt`)?.map((c) => c.content)).toEqual(["short"]);
    expect(stored.has(`${t.orgId}/b.md`)).toBe(false);
  });

  it("fail an object with a clear error, keep the others, and retry only what failed", async () => {
    const t = await tenant();
    t.bucket.put("ok.txt", "fine text");
    t.bucket.put("scan.pdf", "%PDF-1.7", "application/pdf");
    const rule = await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
    });
    const job = await t.call(ingest.triggerIngest, TriggerIngestRequestSchema, IngestJobSchema, {
      bucket: "docs",
      ruleId: rule.ruleId,
    });
    const done = await settled(t, job.jobId);
    expect(done).toMatchObject({ status: IngestJobStatus.PARTIALLY_FAILED, objectsSucceeded: 1n, objectsFailed: 1n });
    expect(done.errorMessage).toContain("scan.pdf: not a readable PDF");

    t.bucket.put("scan.pdf", "now text", "text/plain");
    const retried = await t.call(ingest.retryIngestJob, RetryIngestJobRequestSchema, IngestJobSchema, {
      bucket: "docs",
      jobId: job.jobId,
    });
    expect(retried).toMatchObject({ status: IngestJobStatus.QUEUED, attempt: 2 });
    expect(await settled(t, job.jobId)).toMatchObject({
      status: IngestJobStatus.SUCCEEDED,
      objectsSucceeded: 2n,
      objectsFailed: 0n,
    });

    const again = await errorOf(() =>
      t.call(ingest.retryIngestJob, RetryIngestJobRequestSchema, IngestJobSchema, { bucket: "docs", jobId: job.jobId }),
    );
    expect(again.code).toBe(Code.FailedPrecondition);
  });

  it("run a failed template again once before the object counts as failed", async () => {
    const t = await tenant();
    t.bucket.put("flaky.txt", "text");
    const rule = await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
    });
    failNextRuns = 1;
    const job = await t.call(ingest.triggerIngest, TriggerIngestRequestSchema, IngestJobSchema, {
      bucket: "docs",
      ruleId: rule.ruleId,
    });
    expect(await settled(t, job.jobId)).toMatchObject({ status: IngestJobStatus.SUCCEEDED });
  });

  it("ingest a write to the bucket through its on-change rule", async () => {
    const t = await tenant();
    await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
      filter: { prefix: "in/" },
    });
    t.bucket.put("in/new.txt", "fresh");
    t.bucket.put("out/skip.txt", "ignored");
    await ingest.onObjectChanged({
      orgId: t.orgId,
      bucket: "docs",
      key: "in/new.txt",
      kind: "put",
      contentType: "text/plain",
    });
    await ingest.onObjectChanged({
      orgId: t.orgId,
      bucket: "docs",
      key: "out/skip.txt",
      kind: "put",
      contentType: "text/plain",
    });
    while (!stored.has(`${t.orgId}/in/new.txt`)) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stored.has(`${t.orgId}/out/skip.txt`)).toBe(false);
  });

  it("leave the actions service's run records out of on-change ingestion", async () => {
    const t = await tenant();
    await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
    });
    const manifest = "_actions/runs/8235000000000_0190f0a0-0000-7000-8000-000000000000/manifest.json";
    t.bucket.put(manifest, "{}");
    t.bucket.put("after.txt", "after");
    for (const key of [manifest, "after.txt"])
      await ingest.onObjectChanged({ orgId: t.orgId, bucket: "docs", key, kind: "put", contentType: "text/plain" });
    while (!stored.has(`${t.orgId}/after.txt`)) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stored.has(`${t.orgId}/${manifest}`)).toBe(false);
  });

  it("are taken over from a process that died, without running a finished object again", async () => {
    const t = await tenant();
    const rule = await t.call(ingest.createRule, CreateRuleRequestSchema, IngestRuleSchema, {
      bucket: "docs",
      pipelineId: t.pipelineId,
      paused: false,
    });
    // A job claimed by a process that then vanished: its lease is short and never renewed.
    await worker.stop();
    t.bucket.put("one.txt", "first object");
    t.bucket.put("two.txt", "second object");
    const jobs = createJobStore(database.db);
    const job = await jobs.create(t.orgId, {
      id: randomUUID(),
      bucket: "docs",
      ruleId: rule.ruleId,
      pipelineId: t.pipelineId,
      sourceId: INTERNAL,
      selection: {},
      objects: [
        { key: "one.txt", change: "put" },
        { key: "two.txt", change: "put" },
      ],
    });
    const dead = await jobs.claim("dead-process", 100);
    expect(dead?.id).toBe(job.id);
    await jobs.finishObject(dead!, "one.txt", { status: "succeeded", change: "put", etag: "v1", chunks: 2 });
    const runsBefore = runs;
    worker = startWorker();
    expect(await settled(t, job.id)).toMatchObject({ status: IngestJobStatus.SUCCEEDED, objectsSucceeded: 2n });
    expect(runs - runsBefore).toBe(1);
  });
});
