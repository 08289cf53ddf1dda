import type { JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, createHandlerContext, type ContextValues, type Interceptor, type MethodImplSpec } from "@connectrpc/connect";
import {
  createAsyncIterable,
  invokeUnaryImplementation,
  transformInvokeImplementation,
  type UniversalHandlerFn,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import { errorEnvelope, routingErrorBody } from "../errors/error-envelope.js";
import type { HttpRoute } from "../http-route.js";
import { createPathMatcher } from "../path-template/index.js";
import { isJsonMediaType, mediaTypeOf } from "../rest/media-type.js";
import { decodeRequest } from "../transcode/decode-request.js";
import { encodeResponse } from "../transcode/encode-response.js";
import { requestIdOf, toApiError, type UnexpectedErrorHandler } from "./normalize-error.js";
import { readRequestBody } from "./read-request-body.js";
import { splitRequestTarget } from "./request-target.js";
import { negotiateFraming, streamResponse } from "./stream-response.js";

/** One HTTP route and the implementation it reaches. */
export interface RestRouteTarget {
  readonly route: HttpRoute;
  readonly spec: MethodImplSpec;
}

export interface RestHandlerOptions {
  /** The same interceptors the Connect handlers run, so auth and logging see every protocol. */
  readonly interceptors?: Interceptor[];
  /** Largest request body accepted; beyond it the answer is 413. */
  readonly readMaxBytes?: number;
  /** Aborted when the server shuts down: streams end cleanly. */
  readonly shutdownSignal?: AbortSignal;
  readonly contextValues?: (request: UniversalServerRequest) => ContextValues;
  /** Idle time after which an SSE stream sends a comment line to keep the connection; 0 disables. */
  readonly heartbeatMs?: number;
  /** Gets every error that is not a deliberate API error, with where it happened, to log it. */
  readonly onUnexpectedError?: UnexpectedErrorHandler;
}

const encoder = new TextEncoder();

/**
 * The reason a call's context is aborted with once the call has ended. One shared error: aborting
 * without a reason would build a DOMException, stack trace included, on every call.
 */
const callEnded = new ConnectError("the call has ended", Code.Canceled);

/**
 * The transcoding side of the transport: matches a request against every registered HTTP route,
 * builds the request message, calls the implementation directly (through the interceptors, with
 * no re-encoding or second dispatch) and writes JSON, SSE or NDJSON. Unknown paths are 404, known
 * paths with another method 405 with `Allow`, malformed input 400 naming the field.
 */
export function createRestHandler(targets: readonly RestRouteTarget[], options: RestHandlerOptions = {}): UniversalHandlerFn {
  const matcher = createPathMatcher(targets.map((target) => ({ httpMethod: target.route.httpMethod, template: target.route.template, target })));
  const interceptors = options.interceptors ?? [];
  const readMaxBytes = options.readMaxBytes ?? 16 * 1024 * 1024;
  const heartbeatMs = options.heartbeatMs ?? 15_000;

  return async (request) => {
    const url = splitRequestTarget(request.url);
    const match = matcher.match(request.method, url.pathname);
    switch (match.kind) {
      case "not-found":
        return jsonResponse(404, routingErrorBody(Code.NotFound, `no route for ${request.method} ${url.pathname}`));
      case "method-not-allowed":
        return jsonResponse(405, routingErrorBody(Code.Unimplemented, `${request.method} is not allowed on ${url.pathname}; allowed: ${match.allowedMethods.join(", ")}`), {
          allow: match.allowedMethods.join(", "),
        });
      case "bad-path":
        return jsonResponse(400, routingErrorBody(Code.InvalidArgument, match.reason));
    }
    const { route, spec } = match.target;
    const requestId = requestIdOf(request.header);
    const procedure = `/${spec.method.parent.typeName}/${spec.method.name}`;
    // Errors of the implementation were normalised by the interceptors already; this catches
    // what fails around it (decoding, encoding) on the same terms.
    const normalize = (error: unknown) => toApiError(error, requestId, (unexpected) => options.onUnexpectedError?.(unexpected, { procedure, requestId }));
    const context = createHandlerContext({
      service: spec.method.parent,
      method: spec.method,
      protocolName: "http",
      requestMethod: request.method,
      url: request.url,
      requestSignal: request.signal,
      ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
      requestHeader: request.header,
      ...(options.contextValues ? { contextValues: options.contextValues(request) } : {}),
    });
    // The context's signal is linked to the request's and the shutdown signal by a listener on
    // each; aborting it when the call ends removes them, as Connect's own handlers do, so the
    // shared shutdown signal holds one listener per call in progress and none per call served.
    // A stream's context ends with the stream.
    let ended = true;
    try {
      let body: Uint8Array;
      try {
        body = await readRequestBody(request, readMaxBytes);
      } catch (error) {
        const tooLarge = ConnectError.from(error).code === Code.ResourceExhausted;
        if (!tooLarge) throw error;
        return jsonResponse(413, routingErrorBody(Code.ResourceExhausted, `request body exceeds ${readMaxBytes} bytes`));
      }
      try {
        if (body.byteLength > 0 && route.body !== "" && !isJsonMediaType(mediaTypeOf(request.header.get("content-type")))) {
          return jsonResponse(415, routingErrorBody(Code.InvalidArgument, `unsupported content type "${request.header.get("content-type") ?? ""}": send application/json`));
        }
        const input = decodeRequest(spec.method.input, route, { captures: match.captures, query: url.searchParams, body });
        if (spec.kind === "unary") {
          const output = await invokeUnaryImplementation(spec, context, input, interceptors);
          const header = new Headers(context.responseHeader);
          context.responseTrailer.forEach((value, key) => header.append(key, value));
          return jsonResponse(200, encodeResponse(spec.method.output, route, output), header);
        }
        if (spec.kind === "server_streaming") {
          const outputs = transformInvokeImplementation(spec, context, interceptors)(createAsyncIterable([input]));
          // Wait for the first message (or failure) so that an error before any output still gets
          // its own HTTP status rather than a 200 with an error frame.
          const iterator = outputs[Symbol.asyncIterator]();
          const first = await iterator.next();
          const framing = negotiateFraming(route.streamFraming ?? "ndjson", request.header.get("accept"));
          const rest = endingWith(iterator, () => context.abort(callEnded));
          ended = false;
          return streamResponse({ route, output: spec.method.output, framing, first, rest, responseHeader: context.responseHeader, heartbeatMs, normalize });
        }
        throw new ConnectError(`${spec.kind} methods have no HTTP routes`, Code.Unimplemented);
      } catch (error) {
        const envelope = errorEnvelope(normalize(error));
        return jsonResponse(envelope.status, envelope.body, envelope.headers);
      }
    } finally {
      if (ended) context.abort(callEnded);
    }
  };
}

/** `iterator`, calling `end` once its consumer returns it (streamResponse always does, last). */
function endingWith<T>(iterator: AsyncIterator<T>, end: () => void): AsyncIterator<T> {
  return {
    next: () => iterator.next(),
    async return(value?: unknown) {
      try {
        return (await iterator.return?.(value)) ?? { done: true, value: undefined };
      } finally {
        end();
      }
    },
  };
}

function jsonResponse(status: number, json: JsonValue, headers?: HeadersInit): UniversalServerResponse {
  const header = new Headers(headers);
  header.set("content-type", "application/json");
  return { status, header, body: createAsyncIterable([encoder.encode(JSON.stringify(json))]) };
}
