import type * as http2 from "node:http2";
import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createServiceRouter } from "@platform/codegen/runtime/server";
import { ThreadEventSchema } from "../../../gen/platform/script/v1/events_pb.js";
import { ScriptService } from "../../../gen/platform/script/v1/script_service_pb.js";
import {
  registerScriptService,
  type ScriptServiceImplementation,
} from "../../../gen/platform/script/v1/script_service_server.js";
import { ThreadSchema, ThreadStatus } from "../../../gen/platform/script/v1/thread_pb.js";
import { listenPlane, type PlaneListener } from "./listen-plane.js";
import { createLogger } from "../log/logger.js";

// What the listen-plane tests share: a small ScriptService served through the real router on a
// real port, with handles to hold a call or a stream open.

/** Something a test awaits and the handler resolves (or the other way round). */
export function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
/** Set a fresh signal before a test that awaits one. */
export const gates = {
  /** Resolved when a `getThread("slow")` call has started (it answers 400 ms later). */
  slowEntered: signal(),
  /** Resolved when a `watchThread` stream has sent its first event and waits for shutdown. */
  streamEntered: signal(),
  /** Ends the `watchThread("stubborn")` streams, which ignore the shutdown signal. */
  stubbornRelease: signal(),
};

const implementation: Partial<ScriptServiceImplementation> = {
  healthCheck: () => ({ status: "ok", version: "test", uptimeSeconds: 1n }),
  async getThread(req) {
    if (req.threadId === "boom") throw new ConnectError("boom", Code.Internal);
    if (req.threadId === "slow") {
      gates.slowEntered.resolve();
      await sleep(400);
    }
    return create(ThreadSchema, { threadId: req.threadId, status: ThreadStatus.RUNNING });
  },
  async *watchThread(req, context) {
    yield create(ThreadEventSchema, {
      threadId: req.threadId,
      event: { case: "started", value: { scriptName: "s", totalSteps: 1 } },
    });
    if (req.threadId === "short") return;
    gates.streamEntered.resolve();
    // A well-behaved stream ends when the server shuts down; "stubborn" ignores it, to be cut.
    if (req.threadId === "stubborn") await gates.stubbornRelease.promise;
    else
      await new Promise((resolve) =>
        context.signal.aborted ? resolve(undefined) : context.signal.addEventListener("abort", resolve, { once: true }),
      );
  },
};

/** Lets a test see the request id the handler saw. */
const echoRequestId: Interceptor = (next) => async (req) => {
  const res = await next(req);
  res.header.set("x-seen-request-id", req.header.get("x-request-id") ?? "");
  return res;
};

export const MAX_BODY = 1024;
export const ALLOWED_ORIGIN = "https://app.example";

export interface StartedPlane {
  plane: PlaneListener;
  logs: Record<string, unknown>[];
  setReady(ready: boolean): void;
}

export async function startPlane(corsOrigins: readonly string[] = [ALLOWED_ORIGIN]): Promise<StartedPlane> {
  const logs: Record<string, unknown>[] = [];
  const shutdownController = new AbortController();
  const router = createServiceRouter({ interceptors: [echoRequestId], shutdownSignal: shutdownController.signal });
  registerScriptService(router, implementation);
  let ready = true;
  const plane = await listenPlane({
    name: "api",
    host: "127.0.0.1",
    port: 0,
    handler: router.nodeHandler(),
    corsOrigins,
    maxBodyBytes: MAX_BODY,
    logger: createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    isReady: () => ready,
    shutdownController,
  });
  return { plane, logs, setReady: (value) => (ready = value) };
}

export const client = (transport: Transport) => createClient(ScriptService, transport);
export const port = (url: string) => Number(new URL(url).port);

/** One HTTP/2 request over a session; answers status, headers and body text. */
export function http2Request(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: string) {
  return new Promise<{ status: number; headers: http2.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const stream = session.request(headers, { endStream: body === undefined });
    let text = "";
    let responseHeaders: http2.IncomingHttpHeaders = {};
    stream.on("response", (h) => (responseHeaders = h));
    stream.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    stream
      .on("end", () => resolve({ status: Number(responseHeaders[":status"]), headers: responseHeaders, body: text }))
      .on("error", reject);
    if (body !== undefined) stream.end(body);
  });
}
