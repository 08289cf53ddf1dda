import { getEventListeners, once, setMaxListeners } from "node:events";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { afterEach, describe, expect, it } from "vitest";
import { ThreadEventSchema } from "../../../gen/platform/script/v1/events_pb.js";
import {
  registerScriptService,
  type ScriptServiceImplementation,
} from "../../../gen/platform/script/v1/script_service_server.js";
import { ThreadSchema, ThreadStatus } from "../../../gen/platform/script/v1/thread_pb.js";

// The transcoded HTTP routes are served on node's own request and response, with at most one
// AbortController per call (the call's context, made when something reads its signal): not through
// connect-node's universal request and response, which build three more per call and a
// DOMException on every response close.

const event = (threadId: string) =>
  create(ThreadEventSchema, { threadId, event: { case: "started", value: { scriptName: "s", totalSteps: 1 } } });

/** What the watch implementation saw of its context's signal once the stream stopped. */
let watchEnded: { aborted: boolean; reason: unknown } | undefined;

const implementation: Partial<ScriptServiceImplementation> = {
  getThread(request, context) {
    if (request.threadId === "boom") throw new ConnectError("no such thread", Code.NotFound);
    if (request.threadId === "watchful" && context.signal.aborted) throw new ConnectError("gone", Code.Canceled);
    return create(ThreadSchema, { threadId: request.threadId, status: ThreadStatus.RUNNING });
  },
  async *watchThread(request, context) {
    try {
      yield event(request.threadId);
      if (request.threadId === "short") return;
      // Waits for the client to go away (or the server to shut down).
      await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
    } finally {
      watchEnded = { aborted: context.signal.aborted, reason: context.signal.reason };
    }
  },
};

const servers: (http.Server | http2.Http2Server)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  watchEnded = undefined;
});

async function serve(shutdownSignal: AbortSignal, version: 1 | 2 = 1): Promise<string> {
  const router = createServiceRouter({ shutdownSignal });
  registerScriptService(router, implementation);
  const server = version === 1 ? http.createServer(router.nodeHandler()) : http2.createServer(router.nodeHandler());
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One GET with node's own client (which builds no AbortController), read whole. */
function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      })
      .on("error", reject);
  });
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("the HTTP routes on node's own request and response", () => {
  it("build an AbortController only for a call that reads its signal, answered or refused", async () => {
    const origin = await serve(new AbortController().signal);
    const Original = globalThis.AbortController;
    let built = 0;
    globalThis.AbortController = class extends Original {
      constructor() {
        super();
        built++;
      }
    };
    try {
      const answers = [];
      for (const id of ["t1", "t2", "boom", "t3"]) answers.push(await get(`${origin}/v1/script/threads/${id}`));
      // Refused by decoding, before any context exists.
      answers.push(await get(`${origin}/v1/script/threads/x?unknownField=1`));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 200, 400]);
      expect(JSON.parse(answers[0]!.text)).toMatchObject({ threadId: "t1", status: "THREAD_STATUS_RUNNING" });
      expect(built).toBe(0);
      // A handler that reads its signal gets one.
      expect((await get(`${origin}/v1/script/threads/watchful`)).status).toBe(200);
      expect(built).toBe(1);
    } finally {
      globalThis.AbortController = Original;
    }
  });

  it("leave the shared shutdown signal at its baseline once unary calls and streams have ended", async () => {
    const shutdown = new AbortController();
    setMaxListeners(0, shutdown.signal);
    const origin = await serve(shutdown.signal);
    const baseline = listeners(shutdown.signal);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        get(`${origin}/v1/script/threads/${i % 2 === 0 ? `t${i}` : "short"}${i % 2 === 0 ? "" : "/watch"}`),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.text.startsWith("data:")).length).toBe(20);
    expect(listeners(shutdown.signal)).toBe(baseline);
  });

  it("abort a stream's call when its client goes away, and end it", async () => {
    const shutdown = new AbortController();
    const origin = await serve(shutdown.signal);
    const baseline = listeners(shutdown.signal);
    const request = http.get(`${origin}/v1/script/threads/long/watch`, { agent: false });
    const [response] = (await once(request, "response")) as [http.IncomingMessage];
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const [first] = (await once(response, "data")) as [Buffer];
    expect(first.toString("utf8")).toContain('"threadId":"long"');
    expect(listeners(shutdown.signal)).toBe(baseline + 1);
    request.destroy();
    await expect.poll(() => watchEnded, { timeout: 2000 }).toBeDefined();
    expect(watchEnded!.aborted).toBe(true);
    expect(watchEnded!.reason).toBeInstanceOf(ConnectError);
    expect((watchEnded!.reason as ConnectError).code).toBe(Code.Canceled);
    await expect.poll(() => listeners(shutdown.signal), { timeout: 2000 }).toBe(baseline);
  });

  it("abort and end a stream's call over HTTP/2 when its client cancels the stream", async () => {
    const shutdown = new AbortController();
    const origin = await serve(shutdown.signal, 2);
    const baseline = listeners(shutdown.signal);
    const session = http2.connect(origin);
    try {
      const stream = session.request({ ":path": "/v1/script/threads/long/watch" });
      const [headers] = (await once(stream, "response")) as [http2.IncomingHttpHeaders];
      expect(headers[":status"]).toBe(200);
      const [first] = (await once(stream, "data")) as [Buffer];
      expect(first.toString("utf8")).toContain('"threadId":"long"');
      expect(listeners(shutdown.signal)).toBe(baseline + 1);
      stream.close(http2.constants.NGHTTP2_CANCEL);
      await expect.poll(() => watchEnded, { timeout: 2000 }).toBeDefined();
      expect(watchEnded!.aborted).toBe(true);
      expect((watchEnded!.reason as ConnectError).code).toBe(Code.Canceled);
      await expect.poll(() => listeners(shutdown.signal), { timeout: 2000 }).toBe(baseline);
    } finally {
      session.close();
    }
  });
});
