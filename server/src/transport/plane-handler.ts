import {
  answerError,
  bodyTooLarge,
  internalErrorMessage,
  renderConnectError,
  type NodeHandlerFn,
  type NodeRequest,
  type NodeResponse,
} from "@platform/codegen/runtime/server";
import { createCorsPolicy } from "./cors-policy.js";
import type { Logger } from "../log/logger.js";
import { requestIdFor } from "./request-id.js";
import { protocolOf } from "./request-protocol.js";

export type { NodeRequest, NodeResponse };
/** A node:http / node:http2 request listener, such as the service router's `nodeHandler()`. */
export type NodeRequestHandler = NodeHandlerFn;

/** What /readyz answers: `starting` until the server says it is ready, `stopping` once it closes. */
export type Readiness = "starting" | "ready" | "stopping";

export interface PlaneHandlerOptions {
  /** The plane's name in log lines ("api", "data"). */
  readonly plane: string;
  readonly handler: NodeRequestHandler;
  readonly corsOrigins: readonly string[];
  /** The handler applies a CORS policy of its own (per tenant): the plane's list is not used. */
  readonly handlerCors?: boolean;
  readonly maxBodyBytes: number;
  /**
   * The handler refuses a body over the limit itself, in its own error shape, before reading it
   * (a REST plane's exchange does): the plane does not answer for it.
   */
  readonly handlerLimitsBody?: boolean;
  readonly logger: Logger;
  readonly readiness: () => Readiness;
  /**
   * Called first when a response closes, however it ended (the listener counts the requests in
   * flight): one close listener per request serves both, rather than one each.
   */
  readonly onClosed?: (response: NodeResponse) => void;
}

/**
 * What every request of a plane goes through before the service router: a request id, one log
 * line when it ends, CORS, health and readiness probes, and the body-size limit. These answer for
 * the port, not for a service, so they live here rather than in interceptors: probes and preflights
 * carry no credentials and must not reach auth, and a 413 must not wait for the body to be read.
 */
export function createPlaneHandler(options: PlaneHandlerOptions): NodeRequestHandler {
  const { plane, logger, onClosed } = options;
  const corsFor = createCorsPolicy(options.corsOrigins);
  return (request, response) => {
    const started = performance.now();
    const method = request.method ?? "GET";
    const route = (request.url ?? "/").split("?", 1)[0]!;
    const contentType = request.headers["content-type"];
    const requestId = requestIdFor(request.headers["x-request-id"]);

    // First, before anything that could throw: the listener counts the request in flight until then.
    response.once("close", () => {
      onClosed?.(response);
      const status = response.statusCode;
      const fields = {
        plane,
        method,
        route,
        status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        requestId,
        protocol: protocolOf(method, route, contentType),
        // Cut before the handler ended it: the client went away, or a shutdown's grace ran out.
        ...(response.writableEnded ? {} : { aborted: true }),
      };
      if (status >= 500) logger.warn("request", fields);
      else logger.info("request", fields);
    });

    // Handlers and interceptors read it from the request headers, whatever the protocol.
    request.headers["x-request-id"] = requestId;
    response.setHeader("x-request-id", requestId);

    const cors = options.handlerCors
      ? ({ kind: "not-cors" } as const)
      : corsFor({
          method,
          origin: single(request.headers.origin),
          requestMethod: single(request.headers["access-control-request-method"]),
          requestHeaders: single(request.headers["access-control-request-headers"]),
        });
    if (cors.kind === "preflight-denied") return answer(response, 403);
    if (cors.kind === "preflight-allowed" || cors.kind === "actual") {
      for (const [name, value] of Object.entries(cors.headers)) response.setHeader(name, value);
    }
    if (cors.kind === "preflight-allowed") return answer(response, 204);

    if (method === "GET" && route === "/healthz") return answer(response, 200, { status: "ok" });
    if (method === "GET" && route === "/readyz") {
      const readiness = options.readiness();
      return answer(response, readiness === "ready" ? 200 : 503, { status: readiness });
    }

    // Other bodies are read whole, so a declared size over the limit is refused before reading
    // (a chunked body is held to the router's readMaxBytes as it is read). gRPC client streams are
    // long uploads of many messages: the router's readMaxBytes limits each message instead.
    const declaredLength = Number(request.headers["content-length"] ?? 0);
    if (
      !options.handlerLimitsBody &&
      declaredLength > options.maxBodyBytes &&
      !(contentType ?? "").toLowerCase().startsWith("application/grpc")
    ) {
      // Over HTTP/1.1 the unread body would have to be drained to keep the connection: close it.
      if (request.httpVersionMajor === 1) response.setHeader("connection", "close");
      // The same answer the REST exchange gives, in the RPC planes' shape (the admin plane's too).
      const refused = answerError(bodyTooLarge(options.maxBodyBytes), { requestId, render: renderConnectError });
      response.statusCode = refused.status;
      refused.header.forEach((value, name) => response.setHeader(name, value));
      response.setHeader("content-length", String(refused.body.byteLength));
      response.end(refused.body);
      return;
    }

    try {
      options.handler(request, response);
    } catch (error) {
      // A synchronous throw out of a request listener would take the process down with it.
      logger.error("request handler threw", { plane, route, requestId, error });
      if (!response.headersSent) answer(response, 500, { code: "internal", message: internalErrorMessage(requestId) });
      else response.destroy();
    }
  };
}

/** The response methods both node:http and node:http2 have, without their overloads. */
interface AnswerableResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

function answer(response: AnswerableResponse, status: number, body?: object): void {
  response.statusCode = status;
  if (body === undefined) {
    response.setHeader("content-length", "0");
    response.end("");
    return;
  }
  const text = JSON.stringify(body);
  response.setHeader("content-type", "application/json");
  response.setHeader("content-length", String(Buffer.byteLength(text)));
  response.end(text);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
