import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionRunStatus } from "../../gen/platform/data/actions/v1/action_run_pb.js";
import { ActionsService } from "../../gen/platform/data/actions/v1/actions_service_pb.js";
import { createPlatformClient, s3Credentials } from "../../sdk/src/index.js";
import { freshDatabase, runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

/**
 * The actions service through its real clients, on a server whose catalog is a folder of test
 * definitions (--actions-dir) over a template the server ships: document_chunking, which yields
 * progress while it splits a text, and fails in its `bad_overlap` step when the overlap is not
 * less than the chunk size.
 */

const chunking = {
  template: "document_chunking",
  icon: "scissors",
  visibility: "primary",
  pillars: ["objects"],
  shapes: ["object_single"],
  acceptedContentTypes: ["text/plain", "text/markdown"],
  acceptedExtensions: [".txt", ".md"],
  requires: [],
  bind: { text: "object.text" },
};
const DEFINITIONS: Record<string, object> = {
  chunk_text: {
    ...chunking,
    id: "chunk_text",
    name: "Chunk text",
    invoke: "async",
    output: { kind: "JSON", route: "inline", extension: "json" },
  },
  // The chunks themselves (an array of objects): rows a save can write to a table.
  chunk_rows: {
    ...chunking,
    id: "chunk_rows",
    name: "Chunk rows",
    invoke: "sync",
    output: { kind: "JSON", route: "inline", field: "chunks", extension: "json" },
  },
  table_note: {
    ...chunking,
    id: "table_note",
    name: "Note on a table",
    invoke: "sync",
    pillars: ["tables"],
    shapes: ["table_single"],
    acceptedContentTypes: [],
    acceptedExtensions: [],
    bind: {},
    output: { kind: "JSON", route: "inline", extension: "json" },
  },
  bucket_note: {
    ...chunking,
    id: "bucket_note",
    name: "Note on a bucket",
    invoke: "sync",
    pillars: [""],
    shapes: ["none"],
    acceptedContentTypes: [],
    acceptedExtensions: [],
    bind: {},
    output: { kind: "JSON", route: "inline", extension: "json" },
  },
};

interface Org {
  readonly name: string;
  readonly headers: Record<string, string>;
  readonly credentials: Interceptor;
}

let server: StartedServer | undefined;
let actionsDir = "";
let owner: Org;
let stranger: Org;
const TEXT = "First paragraph of the notes.\n\nSecond paragraph, a little longer than the first one.\n\n".repeat(20);

async function organization(dataDir: string, name: string, buckets: string[], urls: Record<string, string>) {
  const admin = await runAdmin(dataDir, ["create-org", name]);
  const { apiKey, organization } = admin.json as { apiKey: string; organization: { id: string; name: string } };
  const client = createPlatformClient({ apiUrl: urls.api!, token: apiKey, organization: organization.name });
  const issued = await client.iam.createApiKey({ orgId: organization.id, name: "s3", roles: ["data.editor"] });
  const s3 = new S3Client({
    endpoint: urls.s3!,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: await s3Credentials(issued.apiKey!.keyId, issued.secret),
    maxAttempts: 1,
  });
  for (const bucket of buckets) await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const headers = { authorization: `Bearer ${apiKey}`, "x-organization-name": organization.name };
  const credentials: Interceptor = (next) => (req) => {
    for (const [name, value] of Object.entries(headers)) req.header.set(name, value);
    return next(req);
  };
  return { org: { name: organization.name, headers, credentials }, s3 };
}

let ownerS3: S3Client;

beforeAll(async () => {
  actionsDir = await mkdtemp(join(tmpdir(), "platform-actions-"));
  for (const [id, definition] of Object.entries(DEFINITIONS))
    await writeFile(join(actionsDir, `${id}.json`), JSON.stringify(definition));
  server = await startPlatformServer(["--actions-dir", actionsDir], { database: await freshDatabase() });
  const first = await organization(server.dataDir, "actions-owner", ["docs", "archive"], server.urls);
  owner = first.org;
  ownerS3 = first.s3;
  await ownerS3.send(new PutObjectCommand({ Bucket: "docs", Key: "notes.txt", Body: TEXT, ContentType: "text/plain" }));
  await ownerS3.send(new PutObjectCommand({ Bucket: "docs", Key: "readme.md", Body: "# Readme\n\nShort." }));
  await ownerS3.send(
    new PutObjectCommand({ Bucket: "docs", Key: "paper.pdf", Body: "%PDF-1.4", ContentType: "application/pdf" }),
  );
  const second = await organization(server.dataDir, "actions-stranger", ["private"], server.urls);
  stranger = second.org;
  second.s3.destroy();
}, 120_000);

afterAll(async () => {
  ownerS3?.destroy();
  await server?.stop();
  if (actionsDir) await rm(actionsDir, { recursive: true, force: true });
});

async function call<T = Record<string, unknown>>(org: Org, path: string, body: unknown) {
  const response = await fetch(`${server!.urls.data}${path}`, {
    method: "POST",
    headers: { ...org.headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function ok<T = Record<string, unknown>>(org: Org, path: string, body: unknown): Promise<T> {
  const answer = await call<T>(org, path, body);
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const objectSelection = (key: string, bucket = "docs") => ({ pillar: "objects", objectSingle: { bucket, key } });

/** RunAction over HTTP, its NDJSON read line by line as the lines arrive. */
async function runOverHttp(org: Org, body: unknown) {
  const response = await request(`${server!.urls.data}/actions/run`, {
    method: "POST",
    headers: { ...org.headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const lines: Record<string, Record<string, unknown>>[] = [];
  for await (const line of createInterface({ input: response.body, crlfDelay: Infinity })) {
    if (line !== "") lines.push(JSON.parse(line) as Record<string, Record<string, unknown>>);
  }
  return { status: response.statusCode, contentType: String(response.headers["content-type"]), lines };
}

describe("the actions service", () => {
  it("lists the actions that take each selection", async () => {
    const list = async (selection: unknown, search = "") =>
      (await ok<{ actions: { actionId: string }[] }>(owner, "/actions/list", { selection, search })).actions.map(
        (action) => action.actionId,
      );
    expect(await list(objectSelection("notes.txt"))).toEqual(["chunk_rows", "chunk_text"]);
    // No content type given: the stored one (none) falls back to the extension's.
    expect(await list(objectSelection("readme.md"))).toEqual(["chunk_rows", "chunk_text"]);
    expect(await list(objectSelection("paper.pdf"))).toEqual([]);
    expect(await list({ pillar: "", none: { bucket: "docs" } })).toEqual(["bucket_note"]);
    expect(await list(objectSelection("notes.txt"), "ROWS")).toEqual(["chunk_rows"]);
    const table = { pillar: "tables", tableSingle: { bucket: "docs", tableName: "no_such_table" } };
    expect((await call(owner, "/actions/list", { selection: table })).status).toBe(404);
    const { actions } = await ok<{ actions: { paramsForm: { inputs: { name: string }[] } }[] }>(
      owner,
      "/actions/list",
      { selection: objectSelection("notes.txt"), search: "chunk text" },
    );
    const inputs = actions[0]!.paramsForm.inputs.map((input) => input.name);
    expect(inputs).toContain("chunk_size");
    expect(inputs).not.toContain("text");
  });

  it("runs an action over HTTP as NDJSON: started, progress, completed, then history, the run and a saved copy", async () => {
    const run = await runOverHttp(owner, {
      selection: objectSelection("notes.txt"),
      actionId: "chunk_text",
      params: { chunk_size: 200, chunk_overlap: 20, batch_size: 2 },
    });
    expect(run.status).toBe(200);
    expect(run.contentType).toContain("application/x-ndjson");
    const kinds = run.lines.map((line) => Object.keys(line)[0]);
    expect(kinds[0]).toBe("started");
    expect(kinds.at(-1)).toBe("completed");
    expect(kinds.filter((kind) => kind === "progress").length).toBeGreaterThan(1);
    const { runId, threadId } = run.lines[0]!["started"] as { runId: string; threadId: string };
    expect(threadId).not.toBe("");
    const output = run.lines.at(-1)!["completed"]!["output"] as { chunk_total: number };
    expect(output.chunk_total).toBeGreaterThan(3);

    const history = await ok<{ runs: { runId: string; status: string }[] }>(owner, "/actions/runs/list", {
      bucket: "docs",
    });
    expect(history.runs[0]).toMatchObject({ runId, status: "ACTION_RUN_STATUS_COMPLETED" });
    const got = await ok<{ manifest: Record<string, unknown> }>(owner, "/actions/runs/get", {
      bucket: "docs",
      runId,
      inlineSibling: true,
    });
    expect(got.manifest).toMatchObject({ runId, actionId: "chunk_text", threadId, outputKind: "OUTPUT_KIND_JSON" });
    expect((got.manifest["outputInline"] as { chunk_total: number }).chunk_total).toBe(output.chunk_total);

    const save = () =>
      ok<{ promotion: Record<string, unknown>; manifest: { promoted: unknown[] } }>(owner, "/actions/runs/save", {
        bucket: "docs",
        runId,
        s3: { targetBucket: "archive", targetKey: "chunks/notes.json" },
      });
    const first = await save();
    const again = await save();
    expect(again.promotion).toEqual(first.promotion);
    expect(again.manifest.promoted).toHaveLength(1);
    const saved = await ownerS3.send(new GetObjectCommand({ Bucket: "archive", Key: "chunks/notes.json" }));
    expect((JSON.parse(await saved.Body!.transformToString()) as { chunk_total: number }).chunk_total).toBe(
      output.chunk_total,
    );
  });

  it("saves an output's rows to a table once, however often it is asked", async () => {
    const run = await runOverHttp(owner, {
      selection: objectSelection("notes.txt"),
      actionId: "chunk_rows",
      params: { chunk_size: 300, chunk_overlap: 0 },
    });
    expect(run.lines.map((line) => Object.keys(line)[0])).toEqual(["started", "completed"]);
    const { runId } = run.lines[0]!["started"] as { runId: string };
    const chunks = (run.lines[1]!["completed"]!["output"] as { chunks: unknown[] }).chunks.length;
    const save = (createIfMissing: boolean) =>
      call<{
        promotion: { warehouseRows: { tableName: string; rowCount: string } };
        manifest: { promoted: unknown[] };
      }>(owner, "/actions/runs/save", {
        bucket: "docs",
        runId,
        warehouseTable: { targetTableName: "note_chunks", createIfMissing },
      });
    expect((await save(false)).status).toBe(404);
    const first = await save(true);
    expect(first.status).toBe(200);
    expect(first.body.promotion.warehouseRows).toEqual({
      bucket: "docs",
      tableName: "note_chunks",
      rowCount: String(chunks),
    });
    const again = await save(true);
    expect(again.body.promotion).toEqual(first.body.promotion);
    expect(again.body.manifest.promoted).toHaveLength(1);
    // The table is there now, and actions on tables are offered for it.
    const { actions } = await ok<{ actions: { actionId: string }[] }>(owner, "/actions/list", {
      selection: { pillar: "tables", tableSingle: { bucket: "docs", tableName: "note_chunks" } },
    });
    expect(actions.map((action) => action.actionId)).toEqual(["table_note"]);
  });

  it("ends a run that fails after it started with a failed line", async () => {
    const run = await runOverHttp(owner, {
      selection: objectSelection("notes.txt"),
      actionId: "chunk_text",
      params: { chunk_size: 100, chunk_overlap: 200 },
    });
    expect(run.status).toBe(200);
    expect(run.lines.map((line) => Object.keys(line)[0])).toEqual(["started", "failed"]);
    expect(run.lines[1]!["failed"]).toMatchObject({
      error: expect.stringContaining("chunk_overlap (200) must be less than chunk_size (100)"),
      failedStepName: "bad_overlap",
    });
    const failed = await ok<{ runs: { status: string; failedStepName: string }[] }>(owner, "/actions/runs/list", {
      bucket: "docs",
      status: "ACTION_RUN_STATUS_FAILED",
    });
    expect(failed.runs[0]).toMatchObject({ status: "ACTION_RUN_STATUS_FAILED", failedStepName: "bad_overlap" });
  });

  it("refuses bad input before the stream starts, naming the field", async () => {
    const params = await call<{ code: string; message: string }>(owner, "/actions/run", {
      selection: objectSelection("notes.txt"),
      actionId: "chunk_text",
      params: { chunk_size: "big" },
    });
    expect(params.status).toBe(400);
    expect(params.body.message).toContain("params.chunk_size");
    const type = await call<{ message: string }>(owner, "/actions/run", {
      selection: objectSelection("paper.pdf"),
      actionId: "chunk_text",
    });
    expect(type.status).toBe(400);
    expect(type.body.message).toContain("selection.object_single.content_type");
    const unknown = await call(owner, "/actions/run", { selection: objectSelection("notes.txt"), actionId: "nope" });
    expect(unknown.status).toBe(404);
  });

  it("answers NOT_FOUND for another organization's bucket and runs", async () => {
    const { runs } = await ok<{ runs: { runId: string }[] }>(owner, "/actions/runs/list", {
      bucket: "docs",
      status: "ACTION_RUN_STATUS_COMPLETED",
    });
    const runId = runs[0]!.runId;
    expect((await call(stranger, "/actions/runs/get", { bucket: "docs", runId })).status).toBe(404);
    expect((await call(stranger, "/actions/runs/list", { bucket: "docs" })).status).toBe(404);
    expect(
      (
        await call(stranger, "/actions/runs/save", {
          bucket: "docs",
          runId,
          s3: { targetBucket: "private", targetKey: "x" },
        })
      ).status,
    ).toBe(404);
    expect(
      (await call(stranger, "/actions/run", { selection: objectSelection("notes.txt"), actionId: "chunk_text" }))
        .status,
    ).toBe(404);
    // Saving into another organization's bucket is NOT_FOUND too.
    expect(
      (
        await call(owner, "/actions/runs/save", {
          bucket: "docs",
          runId,
          s3: { targetBucket: "private", targetKey: "x" },
        })
      ).status,
    ).toBe(404);
  });

  for (const [protocol, transport] of [
    [
      "Connect",
      () =>
        createConnectTransport({ baseUrl: server!.urls.data!, httpVersion: "1.1", interceptors: [owner.credentials] }),
    ],
    ["gRPC", () => createGrpcTransport({ baseUrl: server!.urls.data!, interceptors: [owner.credentials] })],
  ] as const) {
    it(`runs an action over ${protocol}`, async () => {
      const client = createClient(ActionsService, transport());
      const kinds: string[] = [];
      for await (const event of client.runAction({
        selection: { pillar: "objects", shape: { case: "objectSingle", value: { bucket: "docs", key: "readme.md" } } },
        actionId: "chunk_text",
      }))
        kinds.push(event.event.case ?? "");
      expect(kinds[0]).toBe("started");
      expect(kinds.at(-1)).toBe("completed");
      const failed: string[] = [];
      for await (const event of client.runAction({
        selection: { pillar: "objects", shape: { case: "objectSingle", value: { bucket: "docs", key: "readme.md" } } },
        actionId: "chunk_text",
        params: { chunk_size: 100, chunk_overlap: 100 },
      }))
        failed.push(event.event.case ?? "");
      expect(failed).toEqual(["started", "failed"]);
      const { runs } = await client.listRecentActions({ bucket: "docs", limit: 2 });
      expect(runs.map((run) => run.status)).toEqual([ActionRunStatus.FAILED, ActionRunStatus.COMPLETED]);
    });
  }
});
