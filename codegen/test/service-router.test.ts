import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildService } from "../../gen/platform/compute/v1/build_service_pb.js";
import { createScriptServiceClient } from "../../gen/platform/script/v1/script_service_client.js";
import {
  registerScriptService,
  type ScriptServiceImplementation,
} from "../../gen/platform/script/v1/script_service_server.js";
import { ThreadEventSchema } from "../../gen/platform/script/v1/events_pb.js";
import { ThreadSchema, ThreadStatus } from "../../gen/platform/script/v1/thread_pb.js";
import { createServiceRouter } from "../runtime/server/index.js";

// One implementation, registered once through the generated glue, must answer the same way over
// Connect (JSON and binary), gRPC, gRPC-web and its HTTP routes.
const implementation: Partial<ScriptServiceImplementation> = {
  healthCheck: () => ({ status: "ok", version: "test", uptimeSeconds: 42n }),
  getThread(req) {
    if (req.threadId !== "t-1") throw new ConnectError(`thread ${req.threadId} not found`, Code.NotFound);
    return create(ThreadSchema, { threadId: "t-1", status: ThreadStatus.RUNNING, createdAtMs: 1700000000000n });
  },
  async *watchThread(req) {
    yield create(ThreadEventSchema, {
      threadId: req.threadId,
      timestampMs: 1n,
      event: { case: "started", value: { scriptName: "s", totalSteps: 2 } },
    });
    yield create(ThreadEventSchema, {
      threadId: req.threadId,
      timestampMs: 2n,
      event: { case: "completed", value: { durationMs: 5n, stepsExecuted: 2 } },
    });
  },
};

let http1Url: string;
let http2Url: string;
const servers: { close(): void }[] = [];

beforeAll(async () => {
  const router = createServiceRouter();
  registerScriptService(router, implementation);
  const handler = router.nodeHandler();
  const s1 = http.createServer(handler).listen(0, "127.0.0.1");
  const s2 = http2.createServer(handler).listen(0, "127.0.0.1");
  await Promise.all([new Promise((r) => s1.once("listening", r)), new Promise((r) => s2.once("listening", r))]);
  http1Url = `http://127.0.0.1:${(s1.address() as AddressInfo).port}`;
  http2Url = `http://127.0.0.1:${(s2.address() as AddressInfo).port}`;
  servers.push(s1, s2);
});
afterAll(() => servers.forEach((s) => s.close()));

const transports: [string, () => Transport][] = [
  ["connect json", () => createConnectTransport({ baseUrl: http1Url, httpVersion: "1.1" })],
  ["connect binary", () => createConnectTransport({ baseUrl: http1Url, httpVersion: "1.1", useBinaryFormat: true })],
  ["grpc-web", () => createGrpcWebTransport({ baseUrl: http1Url, httpVersion: "1.1" })],
  ["grpc (h2c)", () => createGrpcTransport({ baseUrl: http2Url })],
];

describe.each(transports)("generated client over %s", (_name, transport) => {
  it("calls a unary method", async () => {
    const client = createScriptServiceClient(transport());
    const health = await client.healthCheck({});
    expect([health.status, health.version, health.uptimeSeconds]).toEqual(["ok", "test", 42n]);
  });

  it("carries the error code", async () => {
    const client = createScriptServiceClient(transport(), { retry: false });
    await expect(client.getThread({ threadId: "missing" })).rejects.toMatchObject({
      code: Code.NotFound,
      rawMessage: "thread missing not found",
    });
  });

  it("streams", async () => {
    const client = createScriptServiceClient(transport());
    const kinds: (string | undefined)[] = [];
    for await (const event of client.watchThread({ threadId: "t-1" })) kinds.push(event.event.case);
    expect(kinds).toEqual(["started", "completed"]);
  });

  it("answers UNIMPLEMENTED for a method the implementation leaves out", async () => {
    const client = createScriptServiceClient(transport());
    await expect(client.listEnvVars({})).rejects.toMatchObject({ code: Code.Unimplemented });
  });
});

describe("the same implementation over its HTTP routes", () => {
  it("serves GET /v1/script/health with every field, int64 as a string", async () => {
    const response = await request(`${http1Url}/v1/script/health`);
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ status: "ok", version: "test", uptimeSeconds: "42" });
  });

  it("binds the path variable and writes enums by name", async () => {
    const response = await request(`${http1Url}/v1/script/threads/t-1`);
    const body = (await response.body.json()) as Record<string, unknown>;
    expect([response.statusCode, body.threadId, body.status, body.createdAtMs]).toEqual([
      200,
      "t-1",
      "THREAD_STATUS_RUNNING",
      "1700000000000",
    ]);
  });

  it("answers the error envelope with the code's status", async () => {
    const response = await request(`${http1Url}/v1/script/threads/missing`);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toEqual({ code: "not_found", message: "thread missing not found" });
  });

  it("streams WatchThread as server-sent events", async () => {
    const response = await request(`${http1Url}/v1/script/threads/t-1/watch`);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const text = await response.body.text();
    expect(
      text
        .split("\n\n")
        .filter(Boolean)
        .map((e) => Object.keys(JSON.parse(e.replace(/^data: /, "")))),
    ).toEqual([expect.arrayContaining(["started"]), expect.arrayContaining(["completed"])]);
  });

  it("serves HTTP routes over HTTP/2 as well", async () => {
    const session = http2.connect(http2Url);
    const body = await new Promise<string>((resolve, reject) => {
      const stream = session.request({ ":path": "/v1/script/health" });
      let data = "";
      stream
        .setEncoding("utf8")
        .on("data", (chunk: string) => (data += chunk))
        .on("end", () => resolve(data))
        .on("error", reject);
    });
    session.close();
    expect(JSON.parse(body)).toMatchObject({ status: "ok" });
  });

  it("routes the path exactly as sent: no authority in //, no dot-segment resolution", async () => {
    const { Socket } = await import("node:net");
    const raw = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = new Socket();
        let data = "";
        socket.connect(Number(new URL(http1Url).port), "127.0.0.1", () =>
          socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        );
        socket
          .setEncoding("utf8")
          .on("data", (chunk: string) => (data += chunk))
          .on("end", () => resolve(data.split("\r\n")[0]!))
          .on("error", reject);
      });
    expect(await raw("//evil/v1/script/health")).toBe("HTTP/1.1 404 Not Found");
    expect(await raw("/v1/script/threads/../health")).toBe("HTTP/1.1 404 Not Found");
    expect(await raw("/v1/script/health")).toBe("HTTP/1.1 200 OK");
  });

  it("answers 404 for an unknown path and 405 with Allow for a wrong method", async () => {
    const missing = await request(`${http1Url}/v1/nowhere`);
    expect(missing.statusCode).toBe(404);
    await missing.body.dump();
    const wrong = await request(`${http1Url}/v1/script/health`, { method: "DELETE" });
    expect([wrong.statusCode, wrong.headers.allow]).toEqual([405, "GET"]);
    await wrong.body.dump();
  });
});

describe("a gRPC call of a method nobody serves", () => {
  const grpcTransports: [string, () => Transport][] = [
    ["grpc (h2c)", () => createGrpcTransport({ baseUrl: http2Url })],
    ["grpc-web", () => createGrpcWebTransport({ baseUrl: http1Url, httpVersion: "1.1" })],
  ];

  it.each(grpcTransports)("is UNIMPLEMENTED over %s, naming the unknown service", async (_name, transport) => {
    const builds = createClient(BuildService, transport());
    await expect(builds.getBuild({})).rejects.toMatchObject({
      code: Code.Unimplemented,
      rawMessage: "service platform.compute.v1.BuildService is not served here",
    });
  });

  it("is answered HTTP 200 with grpc-status 12, and stays a 404 over Connect", async () => {
    const grpcWeb = await request(`${http1Url}/platform.compute.v1.BuildService/GetBuild`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: new Uint8Array(5),
    });
    expect([grpcWeb.statusCode, grpcWeb.headers["grpc-status"]]).toEqual([200, "12"]);
    await grpcWeb.body.dump();
    const method = await request(`${http1Url}/platform.script.v1.ScriptService/HealthCheckV2`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto" },
      body: new Uint8Array(5),
    });
    expect([
      method.statusCode,
      method.headers["grpc-status"],
      decodeURIComponent(String(method.headers["grpc-message"])),
    ]).toEqual([200, "12", "method HealthCheckV2 is not implemented by service platform.script.v1.ScriptService"]);
    await method.body.dump();
    const connect = await request(`${http1Url}/platform.compute.v1.BuildService/GetBuild`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect([connect.statusCode, connect.headers["grpc-status"]]).toEqual([404, undefined]);
    await connect.body.dump();
  });
});
