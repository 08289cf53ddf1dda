import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { createPlaneHandler, type NodeRequest, type NodeRequestHandler, type NodeResponse } from "./plane-handler.js";
import { createPrefaceDispatcher } from "./preface-dispatch.js";

export interface PlaneOptions {
  /** The plane's name in logs: "api", "data". */
  readonly name: string;
  readonly host: string;
  /** 0 picks any free port; `url` tells which. */
  readonly port: number;
  /** The service router's `nodeHandler()`; it serves HTTP/1.1 and HTTP/2 requests alike. */
  readonly handler: NodeRequestHandler;
  /** Origins allowed to call from a browser, matched exactly; `*` allows any. */
  readonly corsOrigins: readonly string[];
  /** The handler answers CORS itself, by a policy of its own: `corsOrigins` is not used. */
  readonly handlerCors?: boolean;
  /** A request declaring a larger `content-length` is answered 413 before routing (gRPC excepted). */
  readonly maxBodyBytes: number;
  /** The handler answers a body over the limit itself, in its plane's error shape (see plane-handler.ts). */
  readonly handlerLimitsBody?: boolean;
  readonly logger: Logger;
  /** Whether the server is ready for traffic (migrations applied, …): /readyz answers 503 until then. */
  readonly isReady: () => boolean;
  /**
   * The controller whose signal the handler was built with (`createServiceRouter({shutdownSignal})`);
   * `close()` aborts it. Without it the listener makes its own, exposed as `shutdownSignal`, which
   * suits a handler created after the listener.
   */
  readonly shutdownController?: AbortController;
}

export interface PlaneListener {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  /**
   * Stops accepting connections, answers /readyz "stopping", aborts `shutdownSignal`, lets
   * in-flight requests finish for up to `graceMs`, then cuts what remains. Calling it again returns
   * the same promise.
   */
  close(graceMs?: number): Promise<void>;
  /** Aborted when `close()` starts, with an UNAVAILABLE ConnectError: streams end and clients retry elsewhere. */
  readonly shutdownSignal: AbortSignal;
}

/** A socket that has not sent a full request line or preface by then is dropped. */
const PREFACE_TIMEOUT_MS = 10_000;
const DEFAULT_GRACE_MS = 10_000;

/** Listens on one port for HTTP/1.1 and cleartext HTTP/2 and serves the plane's handler on both. */
export async function listenPlane(options: PlaneOptions): Promise<PlaneListener> {
  const { logger, name: plane } = options;
  const shutdown = options.shutdownController ?? new AbortController();
  let closing = false;
  let closed: Promise<void> | undefined;
  const inFlight = new Set<NodeResponse>();
  let onIdle: (() => void) | undefined;

  const planeHandler = createPlaneHandler({
    plane,
    handler: options.handler,
    corsOrigins: options.corsOrigins,
    handlerCors: options.handlerCors ?? false,
    maxBodyBytes: options.maxBodyBytes,
    handlerLimitsBody: options.handlerLimitsBody ?? false,
    logger,
    readiness: () => (closing ? "stopping" : options.isReady() ? "ready" : "starting"),
    onClosed: (response) => {
      inFlight.delete(response);
      if (inFlight.size === 0) onIdle?.();
    },
  });
  const serve = (request: NodeRequest, response: NodeResponse) => {
    // Counted until it closes (the plane handler's onClosed).
    inFlight.add(response);
    // While draining, a keep-alive HTTP/1.1 client must not send its next request on this socket.
    if (closing && request.httpVersionMajor === 1) response.setHeader("connection", "close");
    planeHandler(request, response);
  };

  const http1Server = http.createServer(serve);
  const http2Server = http2.createServer(serve);
  const sessions = new Set<http2.ServerHttp2Session>();
  http2Server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
    if (closing) session.close();
  });

  const sockets = new Set<net.Socket>();
  /** Sockets handed to a server; the others have not sent enough bytes to tell their protocol. */
  const dispatched = new WeakSet<net.Socket>();
  http1Server.on("connection", (socket: net.Socket) => dispatched.add(socket));
  http2Server.on("connection", (socket: net.Socket) => dispatched.add(socket));
  const dispatch = createPrefaceDispatcher({ http1: http1Server, http2: http2Server, timeoutMs: PREFACE_TIMEOUT_MS });
  // Half-open allowed, as http.Server does: a client that sends its request and then shuts its
  // writing side (curl, `socket.end(request)`) still receives the answer.
  const tcpServer = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    dispatch(socket);
  });
  const allSocketsClosed = new Promise<void>((resolve) => tcpServer.once("close", () => resolve()));

  await new Promise<void>((resolve, reject) => {
    tcpServer.once("error", reject);
    tcpServer.listen(options.port, options.host, () => {
      tcpServer.off("error", reject);
      resolve();
    });
  });
  tcpServer.on("error", (error) => logger.error("listener error", { plane, error }));
  // Node starts an http.Server's connection tracking on "listening": the header and request timeouts
  // (slow-loris protection) and the idle list behind closeIdleConnections(). This server never
  // listens itself (the TCP server does), so it is told when the port is open.
  http1Server.emit("listening");
  const { port } = tcpServer.address() as net.AddressInfo;
  const url = `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}`;
  logger.info("listening", { plane, url });

  async function drainAndClose(graceMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((resolve) => (timer = setTimeout(resolve, graceMs, "deadline")));
    tcpServer.close();
    if (!shutdown.signal.aborted) shutdown.abort(new ConnectError("the server is shutting down", Code.Unavailable));
    for (const response of inFlight) {
      if (response.req.httpVersionMajor === 1 && !response.headersSent) response.setHeader("connection", "close");
    }
    http1Server.closeIdleConnections();
    // GOAWAY: the client opens no new stream on the session, which ends once its streams have.
    for (const session of sessions) session.close();

    const drained = new Promise<"drained">((resolve) => {
      onIdle = () => resolve("drained");
      if (inFlight.size === 0) resolve("drained");
    });
    let outcome = await Promise.race([drained, deadline]);
    if (outcome === "drained") {
      // What is left is idle: keep-alive sockets whose last response has ended, and sockets that
      // never showed a protocol. HTTP/2 sessions close themselves after GOAWAY.
      http1Server.closeIdleConnections();
      for (const socket of sockets) if (!dispatched.has(socket)) socket.destroy();
      outcome = await Promise.race([allSocketsClosed.then(() => "drained" as const), deadline]);
    }
    clearTimeout(timer);
    if (outcome === "deadline") {
      logger.warn("grace period over: cutting what remains", {
        plane,
        graceMs,
        requests: inFlight.size,
        connections: sockets.size,
      });
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
    }
    await allSocketsClosed;
    http1Server.close();
    http2Server.close();
    logger.info("closed", { plane });
  }

  return {
    url,
    shutdownSignal: shutdown.signal,
    close(graceMs = DEFAULT_GRACE_MS) {
      closing = true;
      closed ??= drainAndClose(graceMs);
      return closed;
    },
  };
}
