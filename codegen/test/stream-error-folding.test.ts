import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ActionEventSchema } from "../../gen/platform/data/actions/v1/action_pb.js";
import { createActionsServiceClient } from "../../gen/platform/data/actions/v1/actions_service_client.js";
import {
  registerActionsService,
  type ActionsServiceImplementation,
} from "../../gen/platform/data/actions/v1/actions_service_server.js";
import { ThreadEventSchema } from "../../gen/platform/script/v1/events_pb.js";
import { createScriptServiceClient } from "../../gen/platform/script/v1/script_service_client.js";
import { registerScriptService } from "../../gen/platform/script/v1/script_service_server.js";
import { createServiceRouter } from "../runtime/server/index.js";

// WatchActionRun declares (platform.api.v1.stream_error_event) = "failed.error": a failure after
// its first event must end the stream with a `failed` ActionEvent and a successful status on
// every protocol, while a failure before it stays an error answer. WatchThread declares nothing
// and must keep ending a failed stream with an error.
const started = (runId: string) =>
  create(ActionEventSchema, { event: { case: "started", value: { actionId: "a-1", runId, startedAtMs: 1n } } });

const implementation: Partial<ActionsServiceImplementation> = {
  async *watchActionRun(req) {
    if (req.runId === "missing") throw new ConnectError(`run ${req.runId} not found`, Code.NotFound);
    yield started(req.runId);
    if (req.runId === "unavailable") throw new ConnectError("the script service is unavailable", Code.Unavailable);
    if (req.runId === "crash") throw new Error("relation runs: password=hunter2");
    yield create(ActionEventSchema, { event: { case: "completed", value: { durationMs: 5n } } });
  },
};

const unexpected: unknown[] = [];
let http1Url: string;
let http2Url: string;
const servers: { close(): void }[] = [];

beforeAll(async () => {
  const router = createServiceRouter({ onUnexpectedError: (error) => unexpected.push(error) });
  registerActionsService(router, implementation);
  registerScriptService(router, {
    async *watchThread(req) {
      yield create(ThreadEventSchema, { threadId: req.threadId, event: { case: "started", value: {} } });
      throw new ConnectError("the thread store is unavailable", Code.Unavailable);
    },
  });
  const handler = router.nodeHandler();
  const s1 = http.createServer(handler).listen(0, "127.0.0.1");
  const s2 = http2.createServer(handler).listen(0, "127.0.0.1");
  await Promise.all([new Promise((r) => s1.once("listening", r)), new Promise((r) => s2.once("listening", r))]);
  http1Url = `http://127.0.0.1:${(s1.address() as AddressInfo).port}`;
  http2Url = `http://127.0.0.1:${(s2.address() as AddressInfo).port}`;
  servers.push(s1, s2);
});
afterAll(() => servers.forEach((s) => s.close()));
beforeEach(() => {
  unexpected.length = 0;
});

const transports: [string, () => Transport][] = [
  ["connect json", () => createConnectTransport({ baseUrl: http1Url, httpVersion: "1.1" })],
  ["connect binary", () => createConnectTransport({ baseUrl: http1Url, httpVersion: "1.1", useBinaryFormat: true })],
  ["grpc-web", () => createGrpcWebTransport({ baseUrl: http1Url, httpVersion: "1.1" })],
  ["grpc (h2c)", () => createGrpcTransport({ baseUrl: http2Url })],
];

describe.each(transports)("a folding stream over %s", (_name, transport) => {
  const events = async (runId: string) => {
    const client = createActionsServiceClient(transport());
    const seen: { case: string | undefined; error?: string }[] = [];
    for await (const { event } of client.watchActionRun({ runId, bucket: "b" })) {
      seen.push(event.case === "failed" ? { case: "failed", error: event.value.error } : { case: event.case });
    }
    return seen;
  };

  it("ends a failure after the first event with a failed event, and the call succeeds", async () => {
    expect(await events("unavailable")).toEqual([
      { case: "started" },
      { case: "failed", error: "the script service is unavailable" },
    ]);
  });

  it("folds an unexpected error as the normaliser answers it, and logs the original once", async () => {
    const seen = await events("crash");
    expect(seen.map((e) => e.case)).toEqual(["started", "failed"]);
    expect(seen[1]!.error).toMatch(/^internal error \(request id [^)]+\)$/);
    expect(unexpected).toEqual([expect.objectContaining({ message: "relation runs: password=hunter2" })]);
  });

  it("leaves a stream that succeeds as it is", async () => {
    expect(await events("ok")).toEqual([{ case: "started" }, { case: "completed" }]);
  });

  it("answers a failure before the first event as an error", async () => {
    await expect(events("missing")).rejects.toMatchObject({ code: Code.NotFound, rawMessage: "run missing not found" });
  });

  it("is left out for a stream that declares no error event", async () => {
    const client = createScriptServiceClient(transport());
    const seen: (string | undefined)[] = [];
    const reading = (async () => {
      for await (const { event } of client.watchThread({ threadId: "t-1" })) seen.push(event.case);
    })();
    await expect(reading).rejects.toMatchObject({ code: Code.Unavailable });
    expect(seen).toEqual(["started"]);
  });
});

describe("a folding stream on its NDJSON route", () => {
  const watch = (runId: string, accept?: string) =>
    request(`${http1Url}/actions/runs/watch`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(accept ? { accept } : {}) },
      body: JSON.stringify({ runId, bucket: "b" }),
    });
  const lines = async (body: { text(): Promise<string> }) =>
    (await body.text())
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it("ends with a failed ActionEvent line, written by the route's JSON rules, and status 200", async () => {
    const response = await watch("unavailable");
    expect([response.statusCode, response.headers["content-type"]]).toEqual([200, "application/x-ndjson"]);
    const all = await lines(response.body);
    expect(all.map((line) => Object.keys(line))).toEqual([["started"], ["failed"]]);
    expect(all.at(-1)).toEqual({
      failed: { error: "the script service is unavailable", failedStepPath: "", failedStepName: "" },
    });
  });

  it("stays NDJSON for an Accept that names only server-sent events", async () => {
    const response = await watch("unavailable", "text/event-stream");
    expect([response.statusCode, response.headers["content-type"]]).toEqual([200, "application/x-ndjson"]);
    expect((await lines(response.body)).at(-1)).toMatchObject({
      failed: { error: "the script service is unavailable" },
    });
  });

  it("answers a failure before the first event with its status and the error envelope", async () => {
    const response = await watch("missing");
    expect([response.statusCode, response.headers["content-type"]]).toEqual([404, "application/json"]);
    expect(await response.body.json()).toEqual({ code: "not_found", message: "run missing not found" });
  });

  it("leaves the other services' routes negotiable, with their error frame", async () => {
    const response = await request(`${http1Url}/v1/script/threads/t-1/watch`, {
      headers: { accept: "application/x-ndjson" },
    });
    expect([response.statusCode, response.headers["content-type"]]).toEqual([200, "application/x-ndjson"]);
    expect((await lines(response.body)).at(-1)).toEqual({
      error: { code: "unavailable", message: "the thread store is unavailable" },
    });
  });
});
