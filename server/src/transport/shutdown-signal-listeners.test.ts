import { getEventListeners, setMaxListeners } from "node:events";
import { create, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createServiceImplSpec, type ServiceImpl } from "@connectrpc/connect";
import { createAsyncIterable, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import { createRestHandler } from "@platform/codegen/runtime/server";
import { afterEach, describe, expect, it } from "vitest";
import { ThreadEventSchema } from "../../../gen/platform/script/v1/events_pb.js";
import { ScriptServiceRoutes } from "../../../gen/platform/script/v1/script_service_http.js";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../gen/platform/script/v1/script_service_server.js";
import { ThreadSchema, ThreadStatus } from "../../../gen/platform/script/v1/thread_pb.js";

// A call's context is linked to the server's shutdown signal by an abort listener on it, from the
// moment something reads the context's signal (streams always do; a unary handler that never
// reads it costs none). The listener must go when the call ends, not when the client's connection
// closes: with keep-alive connections and many calls in flight, listeners left until then pile up
// on the one shared signal (Node's MaxListenersExceededWarning under load). The requests here
// carry a signal that never aborts, so only the end of the call can remove them.

let release: () => void = () => {};
const held = new Promise<void>((resolve) => (release = resolve));
afterEach(() => release());

const implementation: Partial<ScriptServiceImplementation> = {
  async getThread(request, context) {
    // A held call watches its signal, as a handler waiting on something slow would.
    if (request.threadId === "held" && !context.signal.aborted) await held;
    if (request.threadId === "boom") throw new ConnectError("no such thread", Code.NotFound);
    return create(ThreadSchema, { threadId: request.threadId, status: ThreadStatus.RUNNING });
  },
  async *watchThread(request) {
    for (let i = 0; i < 3; i++)
      yield create(ThreadEventSchema, {
        threadId: request.threadId,
        event: { case: "started", value: { scriptName: "s", totalSteps: 1 } },
      });
  },
};

function handlerWith(shutdownSignal: AbortSignal) {
  const spec = createServiceImplSpec(ScriptService as DescService, implementation as Partial<ServiceImpl<DescService>>);
  const targets = ScriptServiceRoutes.routes.map((route) => ({ route, spec: spec.methods[route.rpc]! }));
  return createRestHandler(targets, { shutdownSignal });
}

const neverAborted = new AbortController().signal;
// Many calls in flight at once are many listeners at once, legitimately (the server lifts the
// limit on its shutdown signal the same way); what must not happen is that they outlive the calls.
setMaxListeners(0, neverAborted);
const get = (path: string): UniversalServerRequest => ({
  httpVersion: "1.1",
  method: "GET",
  url: `http://127.0.0.1${path}`,
  header: new Headers(),
  body: createAsyncIterable([]),
  signal: neverAborted,
});

async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<string> {
  let text = "";
  for await (const chunk of body ?? []) text += new TextDecoder().decode(chunk);
  return text;
}

const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("the shutdown signal shared by every HTTP route call", () => {
  it("holds one listener per call in progress that reads its signal, and none once 500 concurrent calls have ended", async () => {
    const shutdown = new AbortController();
    setMaxListeners(0, shutdown.signal);
    const handler = handlerWith(shutdown.signal);
    const baseline = listeners(shutdown.signal);

    const calls = Array.from({ length: 500 }, (_, i) =>
      handler(get(`/v1/script/threads/${i % 5 === 0 ? "boom" : "held"}`)),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    // 400 calls wait in the handler, having read their signal; the 100 that failed never did.
    expect(listeners(shutdown.signal)).toBe(baseline + 400);
    release();
    const answers = await Promise.all(calls);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(400);
    expect(answers.filter((answer) => answer.status === 404)).toHaveLength(100);
    expect(listeners(shutdown.signal)).toBe(baseline);
  });

  it("adds no listener for a unary call that never reads its signal", async () => {
    const shutdown = new AbortController();
    const handler = handlerWith(shutdown.signal);
    const baseline = listeners(shutdown.signal);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => handler(get(`/v1/script/threads/t${i}`))));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(listeners(shutdown.signal)).toBe(baseline);
  });

  it("removes the listener of a call refused before its handler ran (bad input)", async () => {
    const shutdown = new AbortController();
    setMaxListeners(0, shutdown.signal);
    const handler = handlerWith(shutdown.signal);
    const baseline = listeners(shutdown.signal);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => handler(get("/v1/script/threads/x?unknownField=1"))),
    );
    expect(answers.every((answer) => answer.status === 400)).toBe(true);
    expect(listeners(shutdown.signal)).toBe(baseline);
  });

  it("keeps a stream's listener while it is read and removes it when it ends", async () => {
    const shutdown = new AbortController();
    setMaxListeners(0, shutdown.signal);
    const handler = handlerWith(shutdown.signal);
    const baseline = listeners(shutdown.signal);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => handler(get(`/v1/script/threads/t${i}/watch`))),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(listeners(shutdown.signal)).toBe(baseline + 20);
    const bodies = await Promise.all(answers.map((answer) => readAll(answer.body)));
    expect(
      bodies.every(
        (text) => text.split("\n").filter((line) => line.startsWith("data:") || line.startsWith("{")).length === 3,
      ),
    ).toBe(true);
    expect(listeners(shutdown.signal)).toBe(baseline);
  });
});
