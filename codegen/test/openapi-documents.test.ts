import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { OpenAPIObject, OperationObject, ReferenceObject, SchemaObject } from "openapi3-ts/oas31";
import { describe, expect, it } from "vitest";
import { provenanceRemarks } from "./provenance-remarks.js";

// The committed OpenAPI documents must be valid OpenAPI 3.1 (checked against the official JSON
// Schema by a standard validator) and must say what the contract says.
const genDir = join(dirname(fileURLToPath(import.meta.url)), "../../gen/openapi");
const names = (await readdir(genDir)).filter((n) => n.endsWith(".json")).sort();
const load = async (name: string) => JSON.parse(await readFile(join(genDir, name), "utf8")) as OpenAPIObject;

describe.each(names)("%s", (name) => {
  it("validates as OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate((await load(name)) as unknown as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("describes our API only, without remarks on where a choice came from", async () => {
    expect(provenanceRemarks(JSON.stringify(await load(name)))).toEqual([]);
  });

  it("resolves every $ref inside the document", async () => {
    const doc = await load(name);
    const text = JSON.stringify(doc);
    const refs = [...text.matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)].map((m) => [m[1]!, m[2]!] as const);
    for (const [kind, key] of refs) {
      expect((doc.components as Record<string, Record<string, unknown>>)[kind]?.[key], `${kind}/${key}`).toBeDefined();
    }
  });
});

describe("the merged document", async () => {
  const doc = await load("platform.openapi.json");
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>)
      .filter(([method]) => method !== "servers")
      .map(([method, op]) => ({ path, method, op })),
  );
  const find = (id: string) => operations.find((o) => o.op.operationId === id)!;

  it("has unique operation ids", () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("reproduces the specification's routes", () => {
    expect(find("ScriptService_CreateThread")).toMatchObject({ path: "/v1/script/threads", method: "post" });
    expect(find("ScriptService_WatchStep")).toMatchObject({
      path: "/v1/script/threads/{thread_id}/steps/{step_path}/watch",
      method: "get",
    });
    expect(find("ScriptService_UpdateScriptEnv")).toMatchObject({
      path: "/v1/script/scripts/{name}/env",
      method: "patch",
    });
    expect(find("ActionsService_RunAction")).toMatchObject({ path: "/actions/run", method: "post" });
    expect(find("ComputeService_SaveDraft")).toMatchObject({
      path: "/v1/compute/app/{organization_name}/{app_name}/draft",
      method: "post",
    });
    expect(find("PipelineService_BatchDeleteArtifacts")).toMatchObject({
      path: "/{bucket}/pipelines/_batch-delete",
      method: "post",
    });
    expect(find("VectorDbService_HealthCheck")).toMatchObject({ path: "/v1/vectordb/healthz", method: "get" });
    expect(find("VectorDbService_GetCluster")).toMatchObject({
      path: "/v1/vectordb/{or}/clusters/{cluster_id}",
      method: "get",
    });
  });

  it("documents server streams frame by frame, the declared framing first", () => {
    const watch = find("ScriptService_WatchThread").op;
    const watchContent = watch.responses!["200"].content as Record<string, Record<string, unknown>>;
    expect(Object.keys(watchContent)).toEqual(["text/event-stream", "application/x-ndjson"]);
    expect(watchContent["text/event-stream"]).toMatchObject({
      "x-stream-framing": "sse",
      "x-stream-error-schema": { $ref: "#/components/schemas/platform.Error" },
    });
    expect(watchContent["application/x-ndjson"]).toMatchObject({
      "x-stream-framing": "ndjson",
      "x-stream-error-schema": {
        type: "object",
        properties: { error: { $ref: "#/components/schemas/platform.Error" } },
        required: ["error"],
      },
    });
    expect(watch.description).toContain("`event: error`");
    expect(watch.description).toContain('one last line, `{"error": <platform.Error>}`');
  });

  it.each(["ActionsService_RunAction", "ActionsService_WatchActionRun"])(
    "documents %s as NDJSON only, ending with an ActionEvent whose `failed` member holds a failure",
    (operationId) => {
      const op = find(operationId).op;
      expect(op.responses!["200"].content).toEqual({
        "application/x-ndjson": {
          schema: { $ref: "#/components/schemas/platform.data.actions.v1.ActionEvent" },
          "x-stream-framing": "ndjson",
          "x-stream-error-event": "failed.error",
        },
      });
      expect(op.description).toContain("The last frame is always one ActionEvent");
      expect(op.description).toContain("whose `failed` member is set, with the error's message in `failed.error`");
      expect(op.description).toContain("Server-sent events (`text/event-stream`) are not offered");
      expect(op.description).not.toContain('{"error"');
    },
  );

  it("says which listener serves each path", () => {
    expect(doc.servers!.map((s) => s.url)).toEqual(["{api_url}", "{data_api_url}"]);
    const servers = (path: string) =>
      (doc.paths![path] as { servers?: { url: string; variables?: Record<string, { default: string }> }[] }).servers;
    expect(servers("/v1/script/threads")).toEqual([
      expect.objectContaining({ url: "{api_url}", variables: { api_url: { default: "http://127.0.0.1:8080" } } }),
    ]);
    expect(servers("/actions/run")).toEqual([
      expect.objectContaining({
        url: "{data_api_url}",
        variables: { data_api_url: { default: "http://127.0.0.1:8081" } },
      }),
    ]);
    expect(servers("/{bucket}/pipelines")?.[0]?.url).toBe("{data_api_url}");
    expect(servers("/admin/templates")?.[0]?.url).toBe("{data_api_url}");
    for (const [path, item] of Object.entries(doc.paths!)) {
      const want = /^\/(actions|admin|\{bucket\})\//.test(path) ? "{data_api_url}" : "{api_url}";
      expect(
        (item as { servers: { url: string }[] }).servers.map((s) => s.url),
        path,
      ).toEqual([want]);
    }
  });

  it("requires in responses the fields the server always writes, and in requests only REQUIRED ones", () => {
    const thread = doc.components!.schemas!["platform.script.v1.Thread"] as SchemaObject;
    // Implicit-presence scalars and enums, repeated and map fields: written even at their defaults.
    expect(thread.required).toEqual(expect.arrayContaining(["threadId", "status", "createdAtMs"]));
    for (const name of thread.required ?? []) {
      const prop = thread.properties![name] as SchemaObject;
      expect(prop.$ref === undefined || prop.$ref.includes("Status"), `${name} is a message field`).toBe(true);
    }
    // A message read both ways: the response's component requires its always-written fields, the request's one does not.
    const registry = doc.components!.schemas!["platform.compute.v1.RegistrySecret"] as SchemaObject;
    const registryInput = doc.components!.schemas!["platform.compute.v1.RegistrySecretInput"] as SchemaObject;
    expect(registry.required).toEqual(["username", "password", "serverAddress"]);
    expect(registryInput.required).toEqual(["username", "password"]);
  });

  it("documents the security the specification asks for", () => {
    expect(find("ScriptService_HealthCheck").op.security).toEqual([]);
    expect(find("ScriptService_ListTemplates").op.security).toEqual([]);
    expect(find("ScriptService_GetThread").op.security).toEqual([{ bearerAuth: [], organizationName: [] }]);
    expect(find("SecretService_CreateSecret").op.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(doc.components?.securitySchemes ?? {})).toEqual(["bearerAuth", "organizationName"]);
  });

  it("follows proto3 JSON: camelCase names, int64 as strings, enums as names", () => {
    const thread = doc.components!.schemas!["platform.script.v1.Thread"] as SchemaObject;
    const props = thread.properties as Record<string, SchemaObject | ReferenceObject>;
    expect(props.createdAtMs).toMatchObject({ type: "string", format: "int64" });
    expect(props.threadId).toMatchObject({ type: "string" });
    expect(props.status).toMatchObject({ $ref: "#/components/schemas/platform.script.v1.ThreadStatus" });
    const status = doc.components!.schemas!["platform.script.v1.ThreadStatus"] as SchemaObject;
    expect(status.type).toBe("string");
    expect(status.enum).toContain("THREAD_STATUS_PENDING");
  });

  it("leaves path parameters out of the body schema", () => {
    const resume = find("ScriptService_ResumeThread").op;
    const body = (resume.requestBody as { content: Record<string, { schema: SchemaObject }> }).content[
      "application/json"
    ]!.schema;
    expect(Object.keys(body.properties ?? {})).not.toContain("threadId");
    expect(Object.keys(body.properties ?? {})).toContain("stepInputOverrideJson");
  });

  it("describes a oneof as at most one member", () => {
    const secret = doc.components!.schemas!["platform.compute.v1.SecretValue"] as SchemaObject;
    const git = { $ref: "#/components/schemas/platform.compute.v1.GitSecret" };
    const registry = { $ref: "#/components/schemas/platform.compute.v1.RegistrySecret" };
    expect(secret.oneOf).toEqual([
      { properties: { gitSecret: git, registrySecret: false }, required: ["gitSecret"] },
      { properties: { gitSecret: false, registrySecret: registry }, required: ["registrySecret"] },
      { properties: { gitSecret: false, registrySecret: false } },
    ]);
  });
});
