import * as http2 from "node:http2";
import * as net from "node:net";
import { Duplex } from "node:stream";
import { Code, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type * as PrefaceDispatch from "./preface-dispatch.js";
import {
  ALLOWED_ORIGIN,
  client,
  http2Request,
  MAX_BODY,
  port,
  signal,
  startPlane,
  type StartedPlane,
} from "./plane-fixture.js";

/** Called with the next server-side socket the plane accepts, once: lets a test see what the server has read. */
const acceptObservers = vi.hoisted(() => [] as ((socket: net.Socket) => void)[]);
vi.mock("./preface-dispatch.js", async (importOriginal) => {
  const original = await importOriginal<typeof PrefaceDispatch>();
  return {
    ...original,
    createPrefaceDispatcher: (options: Parameters<typeof original.createPrefaceDispatcher>[0]) => {
      const dispatch = original.createPrefaceDispatcher(options);
      return (socket: net.Socket) => {
        dispatch(socket);
        for (const observe of acceptObservers.splice(0)) observe(socket);
      };
    },
  };
});

describe("one port, every protocol", () => {
  let started: StartedPlane;
  let url: string;
  beforeAll(async () => {
    started = await startPlane();
    url = started.plane.url;
  });
  afterAll(() => started.plane.close(1000));

  const transports: [string, () => Transport][] = [
    ["Connect JSON over HTTP/1.1", () => createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
    [
      "Connect binary over HTTP/2",
      () => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true }),
    ],
    ["gRPC-web over HTTP/1.1", () => createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })],
    ["gRPC over h2c (prior knowledge)", () => createGrpcTransport({ baseUrl: url })],
  ];

  it.each(transports)("serves a unary call and a stream over %s", async (_name, transport) => {
    const services = client(transport());
    expect((await services.healthCheck({})).status).toBe("ok");
    await expect(services.getThread({ threadId: "boom" })).rejects.toMatchObject({ code: Code.Internal });
    const events: (string | undefined)[] = [];
    for await (const event of services.watchThread({ threadId: "short" })) events.push(event.event.case);
    expect(events).toEqual(["started"]);
  });

  it("serves the HTTP routes over HTTP/1.1 (undici) and over HTTP/2 (http2.connect)", async () => {
    const response = await request(`${url}/v1/script/health`);
    expect([response.statusCode, await response.body.json()]).toEqual([
      200,
      { status: "ok", version: "test", uptimeSeconds: "1" },
    ]);
    const session = http2.connect(url);
    try {
      const answer = await http2Request(session, { ":path": "/v1/script/health" });
      expect([answer.status, JSON.parse(answer.body)]).toEqual([200, expect.objectContaining({ status: "ok" })]);
    } finally {
      session.close();
    }
  });

  it("recognises an HTTP/2 preface that arrives split over two TCP writes", async () => {
    // The rest of the preface is written once the server has read the first part, so the server
    // sees two reads whatever the timing.
    const firstRead = signal();
    acceptObservers.push((socket) => socket.once("data", () => firstRead.resolve()));
    const tcp = net.connect(port(url), "127.0.0.1");
    const firstWrites: number[] = [];
    // http2.connect over a plain Duplex writes through it, so the first write can be cut in two.
    const split = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        if (firstWrites.length > 0) return void tcp.write(chunk, callback);
        firstWrites.push(10, chunk.length - 10);
        tcp.write(chunk.subarray(0, 10));
        void firstRead.promise.then(() => tcp.write(chunk.subarray(10), callback));
      },
      final(callback) {
        tcp.end();
        callback();
      },
    });
    tcp.on("data", (chunk: Buffer) => split.push(chunk)).on("end", () => split.push(null));
    const session = http2.connect(url, { createConnection: () => split });
    try {
      const answer = await http2Request(session, { ":path": "/healthz" });
      expect([answer.status, answer.body]).toEqual([200, '{"status":"ok"}']);
      expect(firstWrites[0]).toBe(10);
    } finally {
      session.destroy();
      tcp.destroy();
    }
  });

  it("answers /healthz, and /readyz by readiness", async () => {
    const health = await request(`${url}/healthz`);
    expect([health.statusCode, await health.body.json()]).toEqual([200, { status: "ok" }]);
    const ready = await request(`${url}/readyz`);
    expect([ready.statusCode, await ready.body.json()]).toEqual([200, { status: "ready" }]);
    started.setReady(false);
    try {
      const starting = await request(`${url}/readyz`);
      expect([starting.statusCode, await starting.body.json()]).toEqual([503, { status: "starting" }]);
    } finally {
      started.setReady(true);
    }
  });

  describe("CORS", () => {
    const preflight = (origin: string, requestHeaders = "content-type, connect-protocol-version, authorization") =>
      request(`${url}/platform.script.v1.ScriptService/HealthCheck`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": requestHeaders },
      });

    it("answers a preflight from an allowed origin", async () => {
      const response = await preflight(
        ALLOWED_ORIGIN,
        "Content-Type, connect-protocol-version, x-grpc-web, authorization, x-organization-name",
      );
      expect(response.statusCode).toBe(204);
      expect(response.headers).toMatchObject({
        "access-control-allow-origin": ALLOWED_ORIGIN,
        "access-control-allow-methods": "GET, POST, PUT, PATCH, DELETE",
        "access-control-allow-headers":
          "content-type, connect-protocol-version, x-grpc-web, authorization, x-organization-name",
        "access-control-max-age": "7200",
      });
      expect(response.headers.vary).toContain("origin");
      await response.body.dump();
    });

    it("does not echo a header that is not allowed", async () => {
      const response = await preflight(ALLOWED_ORIGIN, "content-type, x-evil");
      expect(response.statusCode).toBe(204);
      expect(String(response.headers["access-control-allow-headers"]).split(", ")).not.toContain("x-evil");
      expect(String(response.headers["access-control-allow-headers"]).split(", ")).toContain("connect-timeout-ms");
      await response.body.dump();
    });

    it("refuses a preflight from another origin with 403 and no CORS headers", async () => {
      const response = await preflight("https://evil.example");
      expect(response.statusCode).toBe(403);
      expect(Object.keys(response.headers).filter((name) => name.startsWith("access-control-"))).toEqual([]);
      await response.body.dump();
    });

    it("exposes connect's and our headers on an actual response, and none to another origin", async () => {
      const call = (origin: string) => request(`${url}/v1/script/health`, { headers: { origin } });
      const allowed = await call(ALLOWED_ORIGIN);
      expect(allowed.headers["access-control-allow-origin"]).toBe(ALLOWED_ORIGIN);
      expect(allowed.headers.vary).toContain("origin");
      const exposed = String(allowed.headers["access-control-expose-headers"]).split(", ");
      expect(exposed).toEqual(
        expect.arrayContaining([
          "grpc-status",
          "grpc-message",
          "grpc-status-details-bin",
          "x-request-id",
          "retry-after",
        ]),
      );
      await allowed.body.dump();
      const other = await call("https://evil.example");
      expect([other.statusCode, other.headers["access-control-allow-origin"]]).toEqual([200, undefined]);
      await other.body.dump();
    });

    it("allows any origin with *", async () => {
      const wildcard = await startPlane(["*"]);
      try {
        const response = await request(`${wildcard.plane.url}/healthz`, {
          headers: { origin: "https://anyone.example" },
        });
        expect(response.headers["access-control-allow-origin"]).toBe("https://anyone.example");
        await response.body.dump();
      } finally {
        await wildcard.plane.close(1000);
      }
    });
  });

  describe("body size limit", () => {
    const healthCheck = `/platform.script.v1.ScriptService/HealthCheck`;

    it("answers 413 with the Connect error for a declared length over the limit, over HTTP/1.1 and HTTP/2", async () => {
      const big = JSON.stringify({ padding: "x".repeat(MAX_BODY) });
      const response = await request(`${url}${healthCheck}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect([response.statusCode, await response.body.json()]).toEqual([
        413,
        { code: "resource_exhausted", message: `request body exceeds ${MAX_BODY} bytes` },
      ]);
      const session = http2.connect(url);
      try {
        const headers = {
          ":method": "POST",
          ":path": healthCheck,
          "content-type": "application/json",
          "content-length": String(big.length),
        };
        const answer = await http2Request(session, headers, big);
        expect([answer.status, JSON.parse(answer.body).code]).toEqual([413, "resource_exhausted"]);
      } finally {
        session.close();
      }
    });

    it("serves a body under the limit", async () => {
      const response = await request(`${url}${healthCheck}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    });

    it("leaves gRPC uploads to the handler's per-message limit", async () => {
      const response = await request(`${url}${healthCheck}`, {
        method: "POST",
        headers: { "content-type": "application/grpc+proto" },
        body: Buffer.alloc(MAX_BODY * 2),
      });
      expect(response.statusCode).not.toBe(413);
      await response.body.dump();
    });
  });

  describe("request id", () => {
    const healthCheck = (requestId?: string) =>
      request(`${url}/platform.script.v1.ScriptService/HealthCheck`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(requestId === undefined ? {} : { "x-request-id": requestId }),
        },
        body: "{}",
      });

    it("echoes an acceptable id and hands it to the handler", async () => {
      const response = await healthCheck("req-1.A_b");
      expect([response.headers["x-request-id"], response.headers["x-seen-request-id"]]).toEqual([
        "req-1.A_b",
        "req-1.A_b",
      ]);
      await response.body.dump();
    });

    it.each([
      ["missing", undefined],
      ["with a space", "bad id"],
      ["too long", "x".repeat(129)],
    ])("generates one when the id is %s", async (_case, id) => {
      const response = await healthCheck(id);
      const generated = response.headers["x-request-id"];
      expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(response.headers["x-seen-request-id"]).toBe(generated);
      await response.body.dump();
    });

    it("does the same over HTTP/2", async () => {
      const session = http2.connect(url);
      try {
        const answer = await http2Request(session, { ":path": "/healthz", "x-request-id": "h2-id" });
        expect(answer.headers["x-request-id"]).toBe("h2-id");
      } finally {
        session.close();
      }
      const seen: string[] = [];
      await client(createGrpcTransport({ baseUrl: url })).healthCheck(
        {},
        { onHeader: (headers) => seen.push(headers.get("x-seen-request-id") ?? "") },
      );
      expect(seen[0]).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe("request log", () => {
    const linesFor = (requestId: string) =>
      started.logs.filter((line) => line.requestId === requestId && line.msg === "request");

    let barriers = 0;
    async function logged(requestId: string) {
      await vi.waitFor(() => expect(linesFor(requestId)).toHaveLength(1));
      // A second line for the request would come as it finishes or closes; a request sent after it
      // has answered is logged later, so once that one's line is there, a second line would be too.
      const barrier = `log-barrier-${++barriers}`;
      await (await request(`${url}/healthz`, { headers: { "x-request-id": barrier } })).body.dump();
      await vi.waitFor(() => expect(linesFor(barrier)).toHaveLength(1));
      expect(linesFor(requestId)).toHaveLength(1);
      return linesFor(requestId)[0]!;
    }

    it("writes one line per request with its fields, without the query", async () => {
      const response = await request(`${url}/v1/script/health?threadId=1`, { headers: { "x-request-id": "log-http" } });
      await response.body.dump();
      expect(await logged("log-http")).toEqual({
        time: expect.any(String),
        level: "info",
        msg: "request",
        plane: "api",
        method: "GET",
        route: "/v1/script/health",
        status: 400, // the route takes no query parameter: the router refuses it, the log has its status
        durationMs: expect.any(Number),
        requestId: "log-http",
        protocol: "http",
      });
    });

    it("names the protocol of each call", async () => {
      const cases: [string, Transport][] = [
        ["connect", createConnectTransport({ baseUrl: url, httpVersion: "1.1" })],
        ["grpc-web", createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" })],
        ["grpc", createGrpcTransport({ baseUrl: url })],
      ];
      for (const [protocol, transport] of cases) {
        await client(transport).healthCheck({}, { headers: { "x-request-id": `log-${protocol}` } });
        const line = await logged(`log-${protocol}`);
        expect(line).toMatchObject({
          protocol,
          method: "POST",
          route: "/platform.script.v1.ScriptService/HealthCheck",
          status: 200,
        });
        expect(line.aborted).toBeUndefined();
      }
    });

    it("logs a 5xx at warn level", async () => {
      const response = await request(`${url}/platform.script.v1.ScriptService/GetThread`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "log-500" },
        body: JSON.stringify({ threadId: "boom" }),
      });
      await response.body.dump();
      expect(await logged("log-500")).toMatchObject({ level: "warn", status: 500, protocol: "connect" });
    });
  });
});
