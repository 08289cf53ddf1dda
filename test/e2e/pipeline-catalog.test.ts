import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { request } from "undici";
import { beforeAll, describe, expect, it } from "vitest";
import { PipelineService } from "../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import { createOrganization, dataUrl, type TestOrganization } from "./shared-server.js";

// The pipeline catalog on the data listener, over plain HTTP with the specification's query
// casing: every route, every field written (unset ones as defaults or null), every error of the
// spec, tenancy across organizations and buckets, and one Connect call on the same listener.

let acme: TestOrganization;
let other: TestOrganization;
beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("pipelines"), createOrganization("pipelines-other")]);
});

type Json = Record<string, unknown>;
interface Answer {
  readonly status: number;
  readonly json: Json;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  org: TestOrganization | null = acme,
): Promise<Answer> {
  const response = await request(`${dataUrl()}${path}`, {
    method: method as "GET",
    headers: {
      ...(org ? { authorization: `Bearer ${org.token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, json: text === "" ? {} : (JSON.parse(text) as Json) };
}

const refused = (answer: Answer, status: number, code: string, mentions: string) => {
  expect(answer.status, JSON.stringify(answer.json)).toBe(status);
  expect(answer.json.code).toBe(code);
  expect(answer.json.message).toContain(mentions);
};

const PIPELINE_FIELDS = [
  "bucket",
  "createdAt",
  "destination",
  "name",
  "options",
  "pipelineId",
  "scriptTemplate",
  "updatedAt",
];
const DESTINATION_FIELDS = ["description", "engineId", "facet", "name", "status", "storeEntityId"];
const VECTOR_FIELDS = [
  "chunkOverlap",
  "chunkSize",
  "dimensions",
  "distanceMetric",
  "embedModel",
  "embeddingSource",
  "embeddingType",
  "enableBm25",
  "modality",
  "physicalName",
  "sparseMode",
  "templateId",
  "templateInputs",
];

/** Inputs the shipped text index template requires beyond those bound per object, whatever they are today. */
const textInputs: Json = {};
const PER_OBJECT = new Set(["text", "source_key", "mime_type", "extracted_at"]);

describe("the pipeline catalog on the data listener", () => {
  it("browses the templates: index templates only for the vector facet", async () => {
    const vector = await call("GET", "/admin/templates?facet=VECTOR");
    expect(vector.status).toBe(200);
    const templates = vector.json.templates as Json[];
    const ids = templates.map((t) => t.templateId);
    expect(ids).toContain("text_embedding_index");
    expect(ids.every((id) => String(id).endsWith("_index"))).toBe(true);
    const text = await call("GET", "/admin/templates/text_embedding_index");
    expect(text.json).toMatchObject({
      templateId: "text_embedding_index",
      facet: "PIPELINE_FACET_VECTOR",
      searchTemplateId: "text_embedding_search",
      vector: { dimensions: 768, modality: "text", distanceMetric: "DISTANCE_METRIC_COSINE" },
    });
    const schema = text.json.inputSchema as { required?: string[]; properties: Record<string, Json> };
    for (const name of schema.required ?? []) {
      if (PER_OBJECT.has(name)) continue;
      const property = schema.properties[name]!;
      textInputs[name] = property.default ?? (property.format === "uri" ? "https://embeddings.example/v1" : "x");
    }
    const search = await call("GET", "/admin/templates?category=embedding&search=search");
    expect((search.json.templates as Json[]).map((t) => t.templateId)).toContain("text_embedding_search");
    refused(await call("GET", "/admin/templates?facet=tables"), 400, "invalid_argument", "facet");
    refused(await call("GET", "/admin/templates/no_such_template"), 404, "not_found", "no_such_template");
  });

  let collection: Json;
  it("creates a vector collection, writing every field, the path's bucket over the body's", async () => {
    const created = await call("POST", "/b1/pipelines/vector", {
      bucket: "ignored",
      name: "docs",
      description: "Support articles",
      templateId: "text_embedding_index",
      templateInputs: textInputs,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    collection = created.json;
    expect(Object.keys(collection).sort()).toEqual(PIPELINE_FIELDS);
    expect(collection).toMatchObject({
      bucket: "b1",
      name: "text_embedding_index",
      scriptTemplate: "text_embedding_index",
      options: null,
    });
    const destination = collection.destination as Json;
    expect(Object.keys(destination).sort()).toEqual([...DESTINATION_FIELDS, "vector"].sort());
    expect(destination).toMatchObject({
      facet: "PIPELINE_FACET_VECTOR",
      name: "docs",
      description: "Support articles",
      status: "DESTINATION_STATUS_ACTIVE",
      engineId: "",
    });
    const vector = destination.vector as Json;
    expect(Object.keys(vector).sort()).toEqual(VECTOR_FIELDS.sort());
    expect(vector).toMatchObject({
      dimensions: 768,
      distanceMetric: "DISTANCE_METRIC_COSINE",
      enableBm25: false,
      sparseMode: "SPARSE_MODE_NONE",
      embeddingType: "EMBEDDING_TYPE_FLOAT",
      modality: "text",
      embeddingSource: "EMBEDDING_SOURCE_PIPELINE",
      templateId: "text_embedding_index",
      embedModel: "nomic-embed-text-v1.5",
    });
    expect(vector.physicalName).toMatch(/^vc_[0-9a-f]{32}$/);
    expect(collection.createdAt).toMatch(/^[0-9]+$/);
  });

  it("refuses a creation with the spec's codes", async () => {
    const create = (body: Json) =>
      call("POST", "/b1/pipelines/vector", { name: "x", templateId: "text_embedding_index", ...body });
    refused(await create({ name: "  " }), 400, "invalid_argument", "name");
    refused(await create({ templateId: "" }), 400, "invalid_argument", "template_id");
    refused(
      await create({ templateInputs: { ...textInputs, dimensions: 3 } }),
      400,
      "invalid_argument",
      "template_inputs",
    );
    refused(await create({ name: "docs", templateInputs: textInputs }), 409, "already_exists", "docs");
    refused(await create({ templateId: "document_chunking" }), 400, "failed_precondition", "embed_model");
    refused(await create({ templateId: "no_such_index" }), 400, "invalid_argument", "template_id");
  });

  it("lists with the snake_case query, both entries of the collection, and pagination null", async () => {
    const destinationId = (collection.destination as Json).storeEntityId as string;
    const free = await call("POST", "/b1/pipelines", { name: "adhoc", scriptTemplate: "document_chunking" });
    expect(free.status, JSON.stringify(free.json)).toBe(200);
    expect(free.json).toMatchObject({ destination: null, options: null, scriptTemplate: "document_chunking" });

    const vector = await call("GET", "/b1/pipelines?facet=Vector&page_size=1&page_token=abc");
    expect(vector.status).toBe(200);
    expect(Object.keys(vector.json).sort()).toEqual(["pagination", "pipelines"]);
    expect(vector.json.pagination).toBeNull();
    const entries = vector.json.pipelines as Json[];
    expect(entries.map((p) => p.scriptTemplate).sort()).toEqual(["text_embedding_index", "text_embedding_search"]);
    expect(new Set(entries.map((p) => (p.destination as Json).storeEntityId))).toEqual(new Set([destinationId]));

    const bound = await call("GET", `/b1/pipelines?store_entity_id=${destinationId}`);
    expect((bound.json.pipelines as Json[]).length).toBe(2);
    const onlyFree = await call("GET", "/b1/pipelines?free_only=true");
    expect((onlyFree.json.pipelines as Json[]).map((p) => p.pipelineId)).toEqual([free.json.pipelineId]);
    const everything = await call("GET", "/b1/pipelines");
    expect((everything.json.pipelines as Json[]).length).toBe(3);
    refused(await call("GET", "/b1/pipelines?facet=vectors"), 400, "invalid_argument", "facet");
    refused(await call("GET", "/b1/pipelines?store_entity_kind=vector"), 400, "invalid_argument", "store_entity_kind");
    // Another bucket and another organization see none of it.
    expect((await call("GET", "/b2/pipelines")).json).toEqual({ pipelines: [], pagination: null });
    expect((await call("GET", "/b1/pipelines", undefined, other)).json).toEqual({ pipelines: [], pagination: null });
  });

  it("gets a pipeline in its organization and bucket only", async () => {
    const id = collection.pipelineId as string;
    const got = await call("GET", `/b1/pipelines/${id}`);
    expect(got.json).toEqual(collection);
    refused(await call("GET", `/b1/pipelines/${id}`, undefined, other), 404, "not_found", id);
    refused(await call("GET", `/b2/pipelines/${id}`), 404, "not_found", id);
    refused(await call("GET", "/b1/pipelines/not-a-uuid"), 400, "invalid_argument", "pipeline_id");
    refused(await call("DELETE", `/b1/pipelines/${id}`, undefined, other), 404, "not_found", id);
    refused(await call("PATCH", `/b1/pipelines/${id}`, { name: "stolen" }, other), 404, "not_found", id);
  });

  it("updates in place and keeps the facet", async () => {
    const id = collection.pipelineId as string;
    const updated = await call("PATCH", `/b1/pipelines/${id}`, {
      name: "docs index",
      destination: { description: "v2" },
    });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    expect(updated.json).toMatchObject({ name: "docs index", destination: { name: "docs", description: "v2" } });
    refused(
      await call("PATCH", `/b1/pipelines/${id}`, { destination: { table: { tableName: "t" } } }),
      400,
      "invalid_argument",
      "destination.table",
    );
    const free = ((await call("GET", "/b1/pipelines?free_only=true")).json.pipelines as Json[])[0]!;
    refused(
      await call("PATCH", `/b1/pipelines/${String(free.pipelineId)}`, { destination: { description: "x" } }),
      400,
      "failed_precondition",
      "destination",
    );
  });

  it("creates table and object destinations and reports the table reservation", async () => {
    const before = await call("GET", "/b3/tables/reservation");
    expect(before.json).toEqual({ bucket: "b3", schemaName: "tables_b3", tableCount: 0, createdAt: "0" });
    const table = await call("POST", "/b3/pipelines/table", {
      name: "chunks",
      templateId: "document_chunking",
      templateInputs: {},
      table: { writeMode: "TABLE_WRITE_MODE_UPSERT", primaryKey: ["id"] },
    });
    expect(table.status, JSON.stringify(table.json)).toBe(200);
    expect(table.json).toMatchObject({
      name: "document_chunking",
      destination: {
        facet: "PIPELINE_FACET_TABLE",
        name: "chunks",
        table: { tableName: "chunks", writeMode: "TABLE_WRITE_MODE_UPSERT", primaryKey: ["id"] },
      },
    });
    expect((await call("GET", "/b3/tables/reservation")).json).toMatchObject({ tableCount: 1 });
    refused(
      await call("POST", "/b3/pipelines/table", {
        name: "bad",
        templateId: "document_chunking",
        table: { writeMode: "TABLE_WRITE_MODE_UPSERT" },
      }),
      400,
      "invalid_argument",
      "table.primary_key",
    );
    const object = await call("POST", "/b3/pipelines/object", { name: "ocr", templateId: "document_chunking" });
    expect(object.json).toMatchObject({
      destination: { facet: "PIPELINE_FACET_OBJECT", object: { prefix: "pipelines/ocr/", format: "jsonl" } },
    });
    refused(
      await call("POST", "/b3/pipelines/object", { name: "ocr", templateId: "document_chunking" }),
      409,
      "already_exists",
      "ocr",
    );
  });

  it("deletes the pipeline row only, then tears the collection down idempotently", async () => {
    const id = collection.pipelineId as string;
    const destinationId = (collection.destination as Json).storeEntityId as string;
    expect(await call("DELETE", `/b1/pipelines/${id}`)).toEqual({ status: 200, json: {} });
    refused(await call("DELETE", `/b1/pipelines/${id}`), 404, "not_found", id);
    const left = (await call("GET", `/b1/pipelines?store_entity_id=${destinationId}`)).json.pipelines as Json[];
    expect(left.map((p) => p.scriptTemplate)).toEqual(["text_embedding_search"]);
    const artifacts = [
      { kind: "ARTIFACT_KIND_DESTINATION", id: destinationId },
      { kind: "ARTIFACT_KIND_PIPELINE", id: left[0]!.pipelineId },
    ];
    const first = await call("POST", "/b1/pipelines/_batch-delete", { artifacts });
    expect(first.json).toEqual({
      results: [
        { artifact: artifacts[1], outcome: "ARTIFACT_DELETE_OUTCOME_DELETED" },
        { artifact: artifacts[0], outcome: "ARTIFACT_DELETE_OUTCOME_DELETED" },
      ],
    });
    const again = await call("POST", "/b1/pipelines/_batch-delete", { artifacts });
    expect((again.json.results as Json[]).map((r) => r.outcome)).toEqual([
      "ARTIFACT_DELETE_OUTCOME_SKIPPED",
      "ARTIFACT_DELETE_OUTCOME_SKIPPED",
    ]);
    refused(
      await call("POST", "/b1/pipelines/_batch-delete", { artifacts: [{ id: destinationId }] }),
      400,
      "invalid_argument",
      "artifacts[0].kind",
    );
    expect((await call("GET", "/b1/pipelines?facet=vector")).json).toEqual({ pipelines: [], pagination: null });
  });

  it("needs a key, and answers the data services not built yet with UNIMPLEMENTED after reading their query", async () => {
    refused(await call("GET", "/b1/pipelines", undefined, null), 401, "unauthenticated", "");
    refused(await call("GET", "/b1/sources?page_size=2"), 501, "unimplemented", "ListSources");
    refused(await call("GET", "/b1/rules?source_id=s&pipeline_id=p"), 501, "unimplemented", "ListRules");
    refused(await call("GET", "/b1/ingest/jobs?status_filter=1&pipelineId=p&pageSize=2"), 501, "unimplemented", "");
    refused(await call("GET", "/b1/ingest/jobs?status=1&status_filter=1"), 400, "invalid_argument", "more than once");
    refused(await call("GET", "/admin/credentials?source_id=s&provider=5"), 501, "unimplemented", "");
    for (const path of ["/b1/vector/search", "/b1/search/vector"]) {
      refused(await call("POST", path, { text: "q" }), 501, "unimplemented", "Search");
    }
  });

  it("documents the routes it serves with the spec's query names", async () => {
    const response = await request(`${dataUrl()}/openapi.json`);
    const document = (await response.body.json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const queryOf = (path: string) =>
      (document.paths[path]!.get!.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
    expect(queryOf("/{bucket}/pipelines")).toEqual(["facet", "store_entity_id", "free_only"]);
    expect(queryOf("/{bucket}/rules")).toEqual(["source_id", "pipeline_id"]);
    expect(queryOf("/{bucket}/sources")).toEqual([]);
    expect(queryOf("/admin/credentials")).toEqual(["source_id", "provider"]);
    expect(queryOf("/{bucket}/ingest/jobs")).toEqual(
      expect.arrayContaining(["pipelineId", "ruleId", "pageSize", "status", "status_filter"]),
    );
    expect(document.paths["/{bucket}/tables/reservation"]?.get).toBeDefined();
    expect(document.paths["/{bucket}/vector/search"]?.post).toBeDefined();
    expect(document.paths["/{bucket}/search/vector"]?.post).toBeDefined();
    expect(document.paths["/v1/compute/secrets"]).toBeUndefined();
  });

  it("answers Connect on the same listener, paging over RPC", async () => {
    const credentials: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${acme.token}`);
      return next(req);
    };
    const client = createClient(
      PipelineService,
      createConnectTransport({ baseUrl: dataUrl(), httpVersion: "1.1", interceptors: [credentials] }),
    );
    for (const name of ["one", "two"]) {
      await client.createPipeline({ bucket: "rpc", name, scriptTemplate: "document_chunking" });
    }
    const first = await client.listPipelines({ bucket: "rpc", pageSize: 1 });
    expect(first.pipelines.map((p) => p.name)).toEqual(["one"]);
    const second = await client.listPipelines({
      bucket: "rpc",
      pageSize: 1,
      pageToken: first.pagination!.nextPageToken,
    });
    expect(second.pipelines.map((p) => p.name)).toEqual(["two"]);
  });
});
