import { create, type JsonObject, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  type HandlerContext,
} from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DistanceMetric,
  EmbeddingSource,
  EmbeddingType,
  PipelineFacet,
  SparseMode,
  TableWriteMode,
  type VectorConfig,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import {
  ArtifactDeleteOutcome,
  ArtifactKind,
  PipelineService,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { PipelineServiceImplementation } from "../../../../gen/platform/data/pipeline/v1/pipeline_service_server.js";
import { TemplateInfoSchema, type TemplateInfo } from "../../../../gen/platform/script/v1/catalog_pb.js";
import { principalKey } from "../../auth/principal.js";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createPipelineService, type PipelineCatalogReader } from "./pipeline-service.js";
import type { TemplateSource } from "./template-facts.js";

/** Index and search templates shaped like the shipped ones, and two that are not index templates. */
const indexInputs: JsonObject = {
  type: "object",
  additionalProperties: false,
  required: ["text", "source_key", "labels"],
  properties: {
    embed_model: { type: "string", const: "test-model", default: "test-model" },
    dimensions: { type: "integer", const: 8, default: 8 },
    embedding_type: { type: "string", const: "int8" },
    enable_bm25: { type: "boolean", const: false, default: false },
    text: { type: "string" },
    source_key: { type: "string" },
    mime_type: { type: "string" },
    extracted_at: { type: "string" },
    labels: { type: "array", items: { type: "string" }, minItems: 1 },
    chunk_size: { type: "integer", default: 900 },
    chunk_overlap: { type: "integer", default: 90 },
  },
};
const template = (id: string, inputs: JsonObject | undefined, labels: Record<string, string>): TemplateInfo =>
  create(TemplateInfoSchema, {
    id,
    name: id,
    description: `the ${id} template`,
    category: "embedding",
    contract: inputs ? { inputs } : undefined,
    labels: Object.entries(labels).map(([key, value]) => ({ key, value })),
  });
const catalog = [
  template("thing_index", indexInputs, { type: "object", stage: "index", search_template: "thing_search" }),
  template("thing_search", indexInputs, { type: "object", stage: "search", index_template: "thing_index" }),
  template("no_contract", undefined, {}),
  template("rows_out", { type: "object", properties: { sheet: { type: "string" } } }, { facet: "table" }),
];
let reachable = true;
const templates: TemplateSource = {
  getTemplate(request) {
    if (!reachable) throw new ConnectError("connection refused", Code.Unavailable);
    const info = catalog.find((t) => t.id === request.id);
    if (!info) throw new ConnectError("no such template", Code.NotFound);
    return { info };
  },
  listTemplates(request) {
    if (!reachable) throw new Error("fetch failed");
    return { templates: catalog.filter((t) => request.search === "" || t.id.includes(request.search)) };
  },
};

let database: TestDatabase;
/** The service's methods taking partial requests (completed as a transport would) and answering whole messages. */
type Methods = typeof PipelineService.method;
type Calls = {
  [K in keyof Methods]: (
    init: MessageInitShape<Methods[K]["input"]>,
    context: HandlerContext,
  ) => Promise<MessageShape<Methods[K]["output"]>>;
};
let service: Calls;
let reader: PipelineCatalogReader;
const deletedRules: string[] = [];
beforeAll(async () => {
  database = await openTestDatabase();
  const parts = createPipelineService({
    db: database.db,
    templates,
    buckets: { exists: (_org, bucket) => Promise.resolve(bucket !== "missing") },
    rules: {
      deleteRule: (_db, _org, _bucket, id) => {
        deletedRules.push(id);
        return Promise.resolve(id === "rule-1");
      },
    },
  });
  // Requests are written as partial inits in the tests: complete them as a transport would.
  const complete: Record<string, unknown> = {};
  for (const method of PipelineService.methods) {
    const handler = parts.service[method.localName as keyof PipelineServiceImplementation] as (
      request: unknown,
      context: HandlerContext,
    ) => unknown;
    complete[method.localName] = (init: Record<string, unknown>, context: HandlerContext) =>
      handler(create(method.input, init as never), context);
  }
  service = complete as unknown as Calls;
  reader = parts.catalog;
});
afterAll(() => database.close());

function contextOf(orgId: string): HandlerContext {
  const contextValues = createContextValues();
  contextValues.set(principalKey, { orgId, orgName: "test", keyId: "key", roles: new Set(["owner"]) });
  return createHandlerContext({
    service: PipelineService,
    method: PipelineService.method.createVectorPipeline,
    protocolName: "connect",
    requestMethod: "POST",
    url: "http://localhost/platform.data.pipeline.v1.PipelineService/CreateVectorPipeline",
    contextValues,
  });
}

type VectorInit = {
  bucket?: string;
  name?: string;
  description?: string;
  templateId?: string;
  templateInputs?: JsonObject;
};
const vectorRequest = (init: Partial<VectorInit> = {}): VectorInit => ({
  bucket: "b1",
  name: "docs",
  templateId: "thing_index",
  templateInputs: { labels: ["cat"] },
  ...init,
});

async function refusal(call: Promise<unknown>): Promise<{ code: Code; message: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return { code: (error as ConnectError).code, message: (error as ConnectError).rawMessage };
}

describe(`pipeline service (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("creates a vector collection: destination, index pipeline and the paired search pipeline", async () => {
    const ctx = contextOf(await database.createOrganization());
    const pipeline = await service.createVectorPipeline(vectorRequest({ description: "d" }), ctx);
    expect(pipeline).toMatchObject({ bucket: "b1", name: "thing_index", scriptTemplate: "thing_index" });
    const destination = pipeline.destination!;
    expect(destination).toMatchObject({ facet: PipelineFacet.VECTOR, name: "docs", description: "d", status: 1 });
    expect(destination.config.case).toBe("vector");
    const vector = destination.config.value as VectorConfig;
    expect(vector).toMatchObject({
      dimensions: 8,
      distanceMetric: DistanceMetric.COSINE,
      chunkSize: 900,
      chunkOverlap: 90,
      enableBm25: false,
      sparseMode: SparseMode.NONE,
      embeddingType: EmbeddingType.INT8,
      modality: "object",
      embeddingSource: EmbeddingSource.PIPELINE,
      templateId: "thing_index",
      embedModel: "test-model",
      templateInputs: { labels: ["cat"] },
    });
    expect(vector.physicalName).toMatch(/^vc_[0-9a-f]{32}$/);
    const listed = await service.listPipelines({ bucket: "b1", facet: "vector" }, ctx);
    expect(listed.pipelines.map((p) => p.scriptTemplate)).toEqual(["thing_index", "thing_search"]);
    expect(new Set(listed.pipelines.map((p) => p.destination!.storeEntityId))).toEqual(
      new Set([destination.storeEntityId]),
    );
    expect(listed.pagination).toBeUndefined();
  });

  it("refuses a creation with the spec's codes, naming the field", async () => {
    const ctx = contextOf(await database.createOrganization());
    const cases: [Partial<VectorInit>, Code, string][] = [
      [{ bucket: " " }, Code.InvalidArgument, "bucket: is required"],
      [{ name: "" }, Code.InvalidArgument, "name: is required"],
      [{ templateId: "" }, Code.InvalidArgument, "template_id: is required"],
      [{ templateId: "nope_index" }, Code.InvalidArgument, 'template_id: unknown template "nope_index"'],
      [{ templateInputs: {} }, Code.InvalidArgument, "template_inputs.labels"],
      [{ templateInputs: { labels: ["a"], dimensions: 9 } }, Code.InvalidArgument, "template_inputs.dimensions"],
      [{ templateId: "no_contract" }, Code.FailedPrecondition, "has no ScriptContract"],
      [{ templateId: "rows_out" }, Code.FailedPrecondition, "resolves no embed_model or no positive dimensions"],
      [{ bucket: "missing" }, Code.NotFound, 'bucket "missing" not found'],
    ];
    for (const [init, code, message] of cases) {
      const answer = await refusal(service.createVectorPipeline(vectorRequest(init), ctx) as Promise<unknown>);
      expect(answer.code, JSON.stringify(init)).toBe(code);
      expect(answer.message).toContain(message);
    }
    await service.createVectorPipeline(vectorRequest(), ctx);
    const taken = await refusal(service.createVectorPipeline(vectorRequest(), ctx) as Promise<unknown>);
    expect(taken.code).toBe(Code.AlreadyExists);
    // The same name in another bucket is another collection.
    await service.createVectorPipeline(vectorRequest({ bucket: "b2" }), ctx);
    reachable = false;
    try {
      const down = await refusal(service.createVectorPipeline(vectorRequest({ name: "x" }), ctx) as Promise<unknown>);
      expect(down.code).toBe(Code.Unavailable);
    } finally {
      reachable = true;
    }
    // Nothing half-written by the refusals: one collection per bucket, each with its two pipelines.
    const listed = await service.listPipelines({ bucket: "b1", facet: "", pageSize: 0, pageToken: "" }, ctx);
    expect(listed.pipelines).toHaveLength(2);
  });

  it("lists by facet (any case), destination and free pipelines, refuses an unknown facet, and pages over gRPC", async () => {
    const ctx = contextOf(await database.createOrganization());
    const vector = await service.createVectorPipeline(vectorRequest(), ctx);
    const table = await service.createTablePipeline(
      { bucket: "b1", name: "sheet one", templateId: "rows_out", description: "" },
      ctx,
    );
    const free = await service.createPipeline({ bucket: "b1", name: "adhoc", scriptTemplate: "rows_out" }, ctx);
    const list = (init: object) => service.listPipelines({ bucket: "b1", ...init }, ctx);
    expect((await list({ facet: "VeCtOr" })).pipelines).toHaveLength(2);
    expect((await list({ facet: "table" })).pipelines.map((p) => p.pipelineId)).toEqual([table.pipelineId]);
    expect((await list({ freeOnly: true })).pipelines.map((p) => p.pipelineId)).toEqual([free.pipelineId]);
    expect(
      (await list({ storeEntityId: vector.destination!.storeEntityId })).pipelines.map((p) => p.scriptTemplate),
    ).toEqual(["thing_index", "thing_search"]);
    const unknown = await refusal(list({ facet: "graphs" }));
    expect(unknown).toEqual({ code: Code.InvalidArgument, message: expect.stringContaining("facet:") });
    expect((await refusal(list({ storeEntityId: "x" }))).message).toContain("store_entity_id");
    const first = await list({ pageSize: 2 });
    expect(first.pipelines).toHaveLength(2);
    const second = await list({ pageSize: 2, pageToken: first.pagination!.nextPageToken });
    expect(second.pipelines).toHaveLength(2);
    expect(second.pagination!.nextPageToken).toBe("");
    expect(new Set([...first.pipelines, ...second.pipelines].map((p) => p.pipelineId)).size).toBe(4);
    expect(table.destination!.config).toMatchObject({
      case: "table",
      value: { tableName: "sheet_one", writeMode: TableWriteMode.APPEND },
    });
  });

  it("gets a pipeline only in its organization and bucket, and refuses a non-UUID id", async () => {
    const ctx = contextOf(await database.createOrganization());
    const other = contextOf(await database.createOrganization());
    const pipeline = await service.createVectorPipeline(vectorRequest(), ctx);
    const get = (bucket: string, pipelineId: string, as = ctx) =>
      service.getPipeline({ bucket, pipelineId }, as) as Promise<unknown>;
    expect(await get("b1", pipeline.pipelineId)).toEqual(pipeline);
    expect((await refusal(get("b1", pipeline.pipelineId, other))).code).toBe(Code.NotFound);
    expect((await refusal(get("b2", pipeline.pipelineId))).code).toBe(Code.NotFound);
    expect(await refusal(get("b1", "not-a-uuid"))).toEqual({
      code: Code.InvalidArgument,
      message: expect.stringContaining("pipeline_id"),
    });
    expect(await reader.getPipeline(await database.createOrganization(), "b1", pipeline.pipelineId)).toBeUndefined();
  });

  it("updates in place, keeping the facet, and refuses a destination block on a free pipeline", async () => {
    const ctx = contextOf(await database.createOrganization());
    const pipeline = await service.createVectorPipeline(vectorRequest(), ctx);
    const update = (init: object) =>
      service.updatePipeline({ bucket: "b1", pipelineId: pipeline.pipelineId, ...init }, ctx);
    const renamed = await update({
      name: "renamed",
      destination: { description: "new", config: { case: "vector", value: { templateInputs: { labels: ["z"] } } } },
    });
    expect(renamed.name).toBe("renamed");
    expect(renamed.destination).toMatchObject({ description: "new", name: "docs" });
    expect(renamed.destination!.config).toMatchObject({ case: "vector", value: { templateInputs: { labels: ["z"] } } });
    expect(renamed.updatedAt).toBeGreaterThan(pipeline.updatedAt);
    const facet = await refusal(update({ destination: { config: { case: "table", value: {} } } }));
    expect(facet).toEqual({ code: Code.InvalidArgument, message: expect.stringContaining("destination.table") });
    const inputs = await refusal(
      update({ destination: { config: { case: "vector", value: { templateInputs: { labels: [] } } } } }),
    );
    expect(inputs.code).toBe(Code.InvalidArgument);
    const free = await service.createPipeline({ bucket: "b1", name: "f", scriptTemplate: "rows_out" }, ctx);
    const onFree = await refusal(
      service.updatePipeline(
        { bucket: "b1", pipelineId: free.pipelineId, destination: { description: "x" } },
        ctx,
      ) as Promise<unknown>,
    );
    expect(onFree.code).toBe(Code.FailedPrecondition);
    expect((await service.getPipeline({ bucket: "b1", pipelineId: free.pipelineId }, ctx)).name).toBe("f");
  });

  it("deletes the pipeline row only, then tears the rest down in dependency order, idempotently", async () => {
    const ctx = contextOf(await database.createOrganization());
    const pipeline = await service.createVectorPipeline(vectorRequest(), ctx);
    const destinationId = pipeline.destination!.storeEntityId;
    await service.deletePipeline({ bucket: "b1", pipelineId: pipeline.pipelineId }, ctx);
    expect(
      (
        await refusal(
          service.deletePipeline({ bucket: "b1", pipelineId: pipeline.pipelineId }, ctx) as Promise<unknown>,
        )
      ).code,
    ).toBe(Code.NotFound);
    const remaining = await service.listPipelines({ bucket: "b1", storeEntityId: destinationId }, ctx);
    expect(remaining.pipelines.map((p) => p.scriptTemplate)).toEqual(["thing_search"]);
    expect((await reader.listVectorCollections(await orgOf(ctx), "b1")).map((c) => c.destination.name)).toEqual([
      "docs",
    ]);

    const artifacts = [
      { kind: ArtifactKind.DESTINATION, id: destinationId },
      { kind: ArtifactKind.PIPELINE, id: remaining.pipelines[0]!.pipelineId },
      { kind: ArtifactKind.RULE, id: "rule-1" },
    ];
    const first = await service.batchDeleteArtifacts({ bucket: "b1", artifacts }, ctx);
    expect(first.results.map((r) => [r.artifact!.kind, r.outcome])).toEqual([
      [ArtifactKind.RULE, ArtifactDeleteOutcome.DELETED],
      [ArtifactKind.PIPELINE, ArtifactDeleteOutcome.DELETED],
      [ArtifactKind.DESTINATION, ArtifactDeleteOutcome.DELETED],
    ]);
    expect(deletedRules).toContain("rule-1");
    const again = await service.batchDeleteArtifacts(
      { bucket: "b1", artifacts: artifacts.filter((a) => a.kind !== ArtifactKind.RULE) },
      ctx,
    );
    expect(again.results.map((r) => r.outcome)).toEqual([ArtifactDeleteOutcome.SKIPPED, ArtifactDeleteOutcome.SKIPPED]);
    expect(await reader.listVectorCollections(await orgOf(ctx), "b1")).toEqual([]);
    const bad = await refusal(
      service.batchDeleteArtifacts({ bucket: "b1", artifacts: [{ kind: 0, id: "x" }] }, ctx) as Promise<unknown>,
    );
    expect(bad).toEqual({ code: Code.InvalidArgument, message: expect.stringContaining("artifacts[0].kind") });
  });

  it("creates object outputs and reports the table reservation", async () => {
    const ctx = contextOf(await database.createOrganization());
    const object = await service.createObjectPipeline(
      { bucket: "b1", name: "ocr", templateId: "rows_out", object: { format: "JSON" } },
      ctx,
    );
    expect(object.destination!.config).toMatchObject({
      case: "object",
      value: { prefix: "pipelines/ocr/", format: "json" },
    });
    const badFormat = await refusal(
      service.createObjectPipeline(
        { bucket: "b1", name: "o2", templateId: "rows_out", object: { format: "csv" } },
        ctx,
      ) as Promise<unknown>,
    );
    expect(badFormat.message).toContain("object.format");
    const empty = await service.getTableReservation({ bucket: "b1" }, ctx);
    expect(empty).toMatchObject({ bucket: "b1", schemaName: "tables_b1", tableCount: 0, createdAt: 0n });
    await service.createTablePipeline({ bucket: "b1", name: "t", templateId: "rows_out" }, ctx);
    const reserved = await service.getTableReservation({ bucket: "b1" }, ctx);
    expect(reserved.tableCount).toBe(1);
    expect(reserved.createdAt).toBeGreaterThan(0n);
  });

  it("browses the templates, index templates only for the vector facet", async () => {
    const ctx = contextOf(await database.createOrganization());
    const all = await service.listTemplates({ category: "", search: "", facet: "" }, ctx);
    expect(all.templates.map((t) => t.templateId)).toEqual(catalog.map((t) => t.id));
    const vector = await service.listTemplates({ category: "", search: "", facet: "VECTOR" }, ctx);
    expect(vector.templates.map((t) => t.templateId)).toEqual(["thing_index"]);
    expect(vector.templates[0]).toMatchObject({
      searchTemplateId: "thing_search",
      vector: { embedModel: "test-model", dimensions: 8, modality: "object" },
    });
    const tables = await service.listTemplates({ category: "", search: "", facet: "table" }, ctx);
    expect(tables.templates.map((t) => t.templateId)).toEqual(["rows_out"]);
    expect((await refusal(service.listTemplates({ facet: "nope" }, ctx) as Promise<unknown>)).code).toBe(
      Code.InvalidArgument,
    );
    expect((await refusal(service.getTemplate({ templateId: "nope" }, ctx) as Promise<unknown>)).code).toBe(
      Code.NotFound,
    );
  });
});

async function orgOf(ctx: HandlerContext): Promise<string> {
  return Promise.resolve(ctx.values.get(principalKey)!.orgId);
}
