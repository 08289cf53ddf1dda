import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createFileRegistry, fromBinary, type AnyDesc, type DescFile, type DescService } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { buildServiceModel } from "../src/proto/binding-model.js";
import { createOptionReader } from "../src/proto/options.js";

// The contract in proto/ against the specification: every RPC it names, at the route its tables
// give, and a comment on every element (comments become the OpenAPI descriptions and SDK docs).
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
let files: DescFile[];
let services: Map<string, DescService>;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), "contract-"));
  try {
    await promisify(execFile)(
      join(root, "node_modules/.bin/buf"),
      ["build", "--as-file-descriptor-set", "-o", join(dir, "set.binpb")],
      { cwd: root },
    );
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, await readFile(join(dir, "set.binpb"))));
    files = [...registry.files];
    services = new Map(files.flatMap((f) => f.services.map((s) => [s.typeName, s] as const)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** The specification's endpoint tables (spec 01 and 02), as `METHOD /path` per RPC. */
const specRoutes: Record<string, Record<string, string>> = {
  "platform.script.v1.ScriptService": {
    CreateThread: "POST /v1/script/threads",
    GetThread: "GET /v1/script/threads/{thread_id}",
    ListThreads: "GET /v1/script/threads",
    CancelThread: "POST /v1/script/threads/{thread_id}/cancel",
    ResumeThread: "POST /v1/script/threads/{thread_id}/resume",
    WatchThread: "GET /v1/script/threads/{thread_id}/watch",
    WatchStep: "GET /v1/script/threads/{thread_id}/steps/{step_path}/watch",
    GetThreadResult: "GET /v1/script/threads/{thread_id}/result",
    StreamThreadResult: "GET /v1/script/threads/{thread_id}/result/stream",
    StreamStepResult: "GET /v1/script/threads/{thread_id}/steps/stream",
    ListArtifacts: "GET /v1/script/threads/{thread_id}/artifacts",
    ListTools: "GET /v1/script/tools",
    SetEnvVar: "PUT /v1/script/env",
    GetEnvVar: "GET /v1/script/env/{key}",
    ListEnvVars: "GET /v1/script/env",
    DeleteEnvVar: "DELETE /v1/script/env/{key}",
    ImportEnvVars: "POST /v1/script/env/import",
    GetScriptEnv: "GET /v1/script/scripts/{name}/env",
    UpdateScriptEnv: "PATCH /v1/script/scripts/{name}/env",
    ListTemplates: "GET /v1/script/templates",
    GetTemplate: "GET /v1/script/templates/{id}",
    HealthCheck: "GET /v1/script/health",
  },
  "platform.data.actions.v1.ActionsService": {
    ListAvailableActions: "POST /actions/list",
    RunAction: "POST /actions/run",
    EnqueueAction: "POST /actions/enqueue",
    EnqueueBulkActions: "POST /actions/enqueue/bulk",
    WatchActionRun: "POST /actions/runs/watch",
    ListActiveRuns: "POST /actions/runs/active",
    ListRecentActions: "POST /actions/runs/list",
    GetActionRun: "POST /actions/runs/get",
    SaveActionOutput: "POST /actions/runs/save",
  },
  "platform.compute.v1.ComputeService": {
    SaveDraft: "POST /v1/compute/app/{organization_name}/{app_name}/draft",
    GetDraftInfo: "GET /v1/compute/app/{organization_name}/{app_name}/draft",
    CompileDraft: "POST /v1/compute/app/{organization_name}/{app_name}/draft/compile",
    PublishDraft: "POST /v1/compute/app/{organization_name}/{app_name}/draft/publish",
    TestDraft: "POST /v1/compute/app/{organization_name}/{app_name}/draft/test",
    GetMcpToolDefinition: "GET /v1/compute/app/{organization_name}/{app_name}/mcp",
    ListMcpTools: "GET /v1/compute/app/{organization_name}/mcp/tools",
  },
  "platform.compute.v1.SecretService": {
    CreateSecret: "POST /v1/compute/secrets",
    GetSecret: "GET /v1/compute/secrets/{name}",
    ListSecrets: "GET /v1/compute/secrets",
    DeleteSecret: "DELETE /v1/compute/secrets/{name}",
  },
  "platform.compute.v1.BuildService": {
    CreateBuild: "POST /v1/compute/builds",
    GetBuild: "GET /v1/compute/builds/{build_id}",
    ListBuilds: "GET /v1/compute/builds",
    StreamBuildLogs: "GET /v1/compute/builds/{build_id}/logs/stream",
    CancelBuild: "POST /v1/compute/builds/{build_id}/cancel",
    SaveBuildSecrets: "PUT /v1/compute/builds/secrets",
  },
  "platform.data.pipeline.v1.PipelineService": {
    CreateVectorPipeline: "POST /{bucket}/pipelines/vector",
    ListPipelines: "GET /{bucket}/pipelines",
    GetPipeline: "GET /{bucket}/pipelines/{pipeline_id}",
    UpdatePipeline: "PATCH /{bucket}/pipelines/{pipeline_id}",
    DeletePipeline: "DELETE /{bucket}/pipelines/{pipeline_id}",
    BatchDeleteArtifacts: "POST /{bucket}/pipelines/_batch-delete",
    ListTemplates: "GET /admin/templates",
  },
  "platform.data.source.v1.SourceService": {
    ListSources: "GET /{bucket}/sources",
    ListCredentials: "GET /admin/credentials",
  },
  "platform.data.ingest.v1.IngestService": {
    ListRules: "GET /{bucket}/rules",
    ListIngestJobs: "GET /{bucket}/ingest/jobs",
  },
  "platform.data.vector.v1.VectorService": {
    ConfigureEngine: "POST /{bucket}/vector",
    GetEngine: "GET /{bucket}/vector",
    DeleteEngine: "DELETE /{bucket}/vector",
    ListVectorDbInstances: "GET /admin/vectordb-instances",
    Search: "POST /{bucket}/vector/search",
  },
  "platform.vectordb.v1.VectorDbService": {
    AllocateDatabase: "POST /v1/vectordb/databases",
    GetService: "GET /v1/vectordb/{service_id}",
    GetServiceAccess: "GET /v1/vectordb/{service_id}/access",
    ListServices: "GET /v1/vectordb/list/{organization_id}",
    DeleteDatabase: "DELETE /v1/vectordb/databases",
    HealthCheck: "GET /v1/vectordb/healthz",
    CreateCluster: "POST /v1/vectordb/clusters",
    GetCluster: "GET /v1/vectordb/{or}/clusters/{cluster_id}",
    ScaleCluster: "POST /v1/vectordb/clusters/{cluster_id}/scale",
    DeleteCluster: "DELETE /v1/vectordb/clusters/{cluster_id}",
    CreateBackup: "POST /v1/vectordb/{service_id}/backup",
    ListBackups: "GET /v1/vectordb/{service_id}/backup",
    ListBackupByOrg: "POST /v1/vectordb/backup/org/{organization_id}",
    RestoreBackup: "POST /v1/vectordb/{service_id}/backup/restore",
    DeleteBackup: "DELETE /v1/vectordb/{service_id}/backup/{backup_name}",
    CreateBackupPolicy: "POST /v1/vectordb/{service_id}/backup/policy",
    UpdateBackupPolicy: "POST /v1/vectordb/{service_id}/backup/policy/{policy_id}",
    DeleteBackupPolicy: "DELETE /v1/vectordb/{service_id}/backup/policy/{policy_id}",
  },
};

/** Operations the specification names without a route; they must exist as RPCs. */
const specMethods: Record<string, string[]> = {
  "platform.compute.v1.BuildService": ["UploadBuildContext"],
  "platform.data.pipeline.v1.PipelineService": [
    "CreateTablePipeline",
    "CreateObjectPipeline",
    "CreatePipeline",
    "GetTemplate",
  ],
  "platform.data.source.v1.SourceService": [
    "CreateSource",
    "GetSource",
    "UpdateSource",
    "DeleteSource",
    "StoreCredential",
    "DeleteCredential",
    "GetOAuthUrl",
    "ExchangeOAuthCode",
    "RefreshOAuthToken",
  ],
  "platform.data.ingest.v1.IngestService": [
    "CreateRule",
    "GetRule",
    "UpdateRule",
    "DeleteRule",
    "TriggerDiscovery",
    "TriggerIngestion",
    "GetSyncStatus",
    "TriggerIngest",
    "GetIngestStatus",
    "RetryIngestJob",
  ],
  "platform.vectordb.v1.VectorDbService": ["GetClusterInProgressTasks"],
};

describe("the contract", () => {
  it.each(Object.keys(specRoutes))("%s has the specification's routes", (name) => {
    const service = services.get(name);
    expect(service, name).toBeDefined();
    const model = buildServiceModel(service!, createOptionReader(files));
    const actual = Object.fromEntries(
      model.methods
        .filter((m) => m.method.name in specRoutes[name]!)
        .map((m) => [m.method.name, `${m.routes[0]?.httpMethod} ${m.routes[0]?.template.source}`]),
    );
    expect(actual).toEqual(specRoutes[name]);
  });

  it.each(Object.entries(specMethods))("%s has every operation the specification names", (name, methods) => {
    const names = services.get(name)!.methods.map((m) => m.name);
    expect(names).toEqual(expect.arrayContaining(methods));
  });

  it("has exactly the method counts the specification gives", () => {
    const count = (name: string) => services.get(name)!.methods.length;
    // The 22 of the specification, the 4 that publish and read scripts, which it never shows, and
    // the 2 that read and rotate the key signing thread callbacks, whose format it leaves open.
    expect(count("platform.script.v1.ScriptService")).toBe(28);
    expect(count("platform.data.actions.v1.ActionsService")).toBe(9);
    expect(count("platform.compute.v1.SecretService")).toBe(4);
    expect(count("platform.compute.v1.BuildService")).toBe(7);
    expect(count("platform.vectordb.v1.VectorDbService")).toBe(19);
  });

  it("binds Search to both of the specification's routes", () => {
    const model = buildServiceModel(services.get("platform.data.vector.v1.VectorService")!, createOptionReader(files));
    const search = model.methods.find((m) => m.method.name === "Search")!;
    expect(search.routes.map((r) => `${r.httpMethod} ${r.template.source}`)).toEqual([
      "POST /{bucket}/vector/search",
      "POST /{bucket}/search/vector",
    ]);
  });

  it("gives every unary and server-streaming RPC an HTTP route, and none to client streams", () => {
    const options = createOptionReader(files);
    const missing = [...services.values()]
      .filter((s) => s.typeName.startsWith("platform."))
      .flatMap((s) => buildServiceModel(s, options).methods)
      .filter(
        (m) => m.routes.length > 0 !== (m.method.methodKind === "unary" || m.method.methodKind === "server_streaming"),
      )
      .map((m) => `${m.method.parent.typeName}.${m.method.name}`);
    expect(missing).toEqual([]);
  });

  it("frames the specification's streams as it says: SSE for script, NDJSON for actions", () => {
    const options = createOptionReader(files);
    const framing = (service: string, method: string) =>
      options.streamFraming(services.get(service)!.methods.find((m) => m.name === method)!);
    for (const m of ["WatchThread", "WatchStep", "StreamThreadResult", "StreamStepResult"])
      expect(framing("platform.script.v1.ScriptService", m)).toBe("sse");
    for (const m of ["RunAction", "WatchActionRun"])
      expect(framing("platform.data.actions.v1.ActionsService", m)).toBe("ndjson");
  });

  it("marks only the specification's public methods public, and asks for the organization header on the script service", () => {
    const options = createOptionReader(files);
    const publicMethods = [...services.values()].flatMap((s) =>
      s.methods.filter((m) => options.isPublic(m)).map((m) => `${s.name}.${m.name}`),
    );
    expect(publicMethods.sort()).toEqual([
      "ScriptService.GetTemplate",
      "ScriptService.HealthCheck",
      "ScriptService.ListTemplates",
      "VectorDbService.HealthCheck",
    ]);
    const withHeader = [...services.values()].filter((s) => options.organizationHeader(s)).map((s) => s.name);
    expect(withHeader).toEqual(["ScriptService"]);
  });

  it("documents every service, method, message, field, oneof, enum and enum value", () => {
    const undocumented: string[] = [];
    const check = (desc: Exclude<AnyDesc, DescFile>, name: string) => {
      if ((getComments(desc).leading ?? "").trim() === "") undocumented.push(name);
    };
    const visitMessage = (message: DescFile["messages"][number]) => {
      check(message, message.typeName);
      message.fields.forEach((f) => check(f, `${message.typeName}.${f.name}`));
      message.oneofs.forEach((o) => check(o, `${message.typeName}.${o.name}`));
      message.nestedMessages.forEach(visitMessage);
      message.nestedEnums.forEach((e) => {
        check(e, e.typeName);
        e.values.forEach((v) => check(v, `${e.typeName}.${v.name}`));
      });
    };
    for (const file of files.filter((f) => f.name.startsWith("platform/"))) {
      file.services.forEach((s) => {
        check(s, s.typeName);
        s.methods.forEach((m) => check(m, `${s.typeName}.${m.name}`));
      });
      file.messages.forEach(visitMessage);
      file.enums.forEach((e) => {
        check(e, e.typeName);
        e.values.forEach((v) => check(v, `${e.typeName}.${v.name}`));
      });
    }
    expect(undocumented).toEqual([]);
  });
});
