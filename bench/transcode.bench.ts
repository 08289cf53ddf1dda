// Route-match and transcoding cost per request on the real contract: every HTTP route of every
// service in one matcher, as the server builds it. Baseline in the same run: parsing the same
// JSON with @bufbuild/protobuf alone (what any JSON transport must pay), so the ratio shows what
// routing and transcoding add.
// Run: npx tsx bench/transcode.bench.ts
import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { createConnectRouter, createServiceImplSpec } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import {
  createPathMatcher,
  decodeRequest,
  encodeResponse,
  type HttpRoute,
  type ServiceHttpRoutes,
} from "@platform/codegen/runtime";
import { createRestHandler } from "@platform/codegen/runtime/server";
import { BuildServiceRoutes } from "../gen/platform/compute/v1/build_service_http.js";
import { ComputeServiceRoutes } from "../gen/platform/compute/v1/compute_service_http.js";
import { SecretServiceRoutes } from "../gen/platform/compute/v1/secret_service_http.js";
import { ActionsServiceRoutes } from "../gen/platform/data/actions/v1/actions_service_http.js";
import { IngestServiceRoutes } from "../gen/platform/data/ingest/v1/ingest_service_http.js";
import { SourceServiceRoutes } from "../gen/platform/data/source/v1/source_service_http.js";
import { IamServiceRoutes } from "../gen/platform/iam/v1/iam_service_http.js";
import { PipelineServiceRoutes } from "../gen/platform/data/pipeline/v1/pipeline_service_http.js";
import { VectorServiceRoutes } from "../gen/platform/data/vector/v1/vector_service_http.js";
import { ScriptServiceRoutes } from "../gen/platform/script/v1/script_service_http.js";
import { ThreadSchema, ThreadStatus } from "../gen/platform/script/v1/thread_pb.js";
import { CreateThreadRequestSchema, ScriptService } from "../gen/platform/script/v1/script_service_pb.js";
import { VectorDbServiceRoutes } from "../gen/platform/vectordb/v1/vectordb_service_http.js";
import { create } from "@bufbuild/protobuf";
import { formatNs, measure, measureAsync } from "./measure.js";

// Every HTTP route of the contract in one matcher: the worst case, as if one port served all planes.
const tables: ServiceHttpRoutes[] = [
  ScriptServiceRoutes,
  ComputeServiceRoutes,
  SecretServiceRoutes,
  BuildServiceRoutes,
  ActionsServiceRoutes,
  PipelineServiceRoutes,
  SourceServiceRoutes,
  IngestServiceRoutes,
  VectorServiceRoutes,
  VectorDbServiceRoutes,
  IamServiceRoutes,
];
const entries = tables.flatMap((t) => t.routes.map((route) => ({ route, service: t.service })));
const matcher = createPathMatcher(
  entries.map((e) => ({ httpMethod: e.route.httpMethod, template: e.route.template, target: e })),
);
const routeOf = (rpc: string) => entries.find((e) => e.route.rpc === rpc)!.route as HttpRoute;

const createBody = JSON.stringify({
  scriptName: "extract",
  version: 3,
  inputJson: '{"url":"https://example.com"}',
  timeout: "5m",
  metadata: { team: "a", env: "prod" },
  loadEnv: true,
});
const createBytes = new TextEncoder().encode(createBody);
const thread = create(ThreadSchema, {
  threadId: "th_123",
  scriptName: "extract",
  scriptVersion: 3,
  status: ThreadStatus.RUNNING,
  currentStepPath: "1.0.2",
  totalSteps: 4,
  metadata: { team: "a" },
  createdAtMs: 1700000000000n,
});

const results = [
  measure("baseline: fromJsonString(CreateThreadRequest)", () => fromJsonString(CreateThreadRequestSchema, createBody)),
  measure("baseline: toJsonString(Thread)", () => toJsonString(ThreadSchema, thread, { alwaysEmitImplicit: true })),
  measure(`match GET /v1/script/threads/{id} among ${entries.length} routes`, () =>
    matcher.match("GET", "/v1/script/threads/th_123"),
  ),
  measure("match POST /{bucket}/pipelines/_batch-delete (literal beside variable)", () =>
    matcher.match("POST", "/bkt/pipelines/_batch-delete"),
  ),
  measure("match + decode POST /v1/script/threads (body *)", () => {
    const m = matcher.match("POST", "/v1/script/threads");
    if (m.kind !== "matched") throw new Error("no match");
    return decodeRequest(CreateThreadRequestSchema, m.target.route, {
      captures: m.captures,
      query: new URLSearchParams(),
      body: createBytes,
    });
  }),
  measure("match + decode GET /v1/script/threads?pageSize=20&statusFilter=THREAD_STATUS_RUNNING", () => {
    const url = new URL(
      "http://h/v1/script/threads?pageSize=20&statusFilter=THREAD_STATUS_RUNNING&script_name_filter=x",
    );
    const m = matcher.match("GET", url.pathname);
    if (m.kind !== "matched") throw new Error("no match");
    return decodeRequest(m.target.service.methods.find((x) => x.localName === "listThreads")!.input, m.target.route, {
      captures: m.captures,
      query: url.searchParams,
      body: new Uint8Array(),
    });
  }),
  measure("encode Thread response", () => JSON.stringify(encodeResponse(ThreadSchema, routeOf("getThread"), thread))),
];

// The whole HTTP handler path in process (no sockets): match, read body, decode, interceptors,
// implementation, encode. Baseline: connect-node's own Connect JSON handler for the same RPC and
// implementation, driven the same way, so the ratio is what the HTTP route costs over Connect.
const implementation = { getThread: () => thread };
const spec = createServiceImplSpec<typeof ScriptService>(ScriptService, implementation);
const rest = createRestHandler([{ route: routeOf("getThread"), spec: spec.methods.getThread! }]);
const router = createConnectRouter();
router.service(ScriptService, implementation);
const connect = router.handlers.find((h) => h.requestPath.endsWith("/GetThread"))!;
const getThreadJson = new TextEncoder().encode(JSON.stringify({ threadId: "th_123" }));
const drain = async (body: AsyncIterable<Uint8Array> | undefined) => {
  for await (const _ of body ?? []) void _;
};
results.push(
  await measureAsync("baseline: Connect JSON handler, GetThread, in process", async () => {
    const response = await connect({
      httpVersion: "1.1",
      url: "http://h/platform.script.v1.ScriptService/GetThread",
      method: "POST",
      header: new Headers({ "content-type": "application/json" }),
      body: createAsyncIterable([getThreadJson]),
      signal: new AbortController().signal,
    });
    await drain(response.body);
  }),
  await measureAsync("REST handler GET /v1/script/threads/{id}, in process", async () => {
    const response = await rest({
      httpVersion: "1.1",
      url: "/v1/script/threads/th_123",
      method: "GET",
      header: new Headers(),
      body: createAsyncIterable([]),
      signal: new AbortController().signal,
    });
    await drain(response.body);
  }),
);

for (const r of results) console.log(`${formatNs(r.nsPerOp).padStart(10)}  ${r.name}`);
