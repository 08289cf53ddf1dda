import {
  Code,
  ConnectError,
  createHandlerContext,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import {
  createAsyncIterable,
  invokeUnaryImplementation,
  transformInvokeImplementation,
  type UniversalHandlerFn,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import type { HttpRoute } from "../http-route.js";
import { isJsonMediaType } from "../rest/media-type.js";
import { decodeRequest } from "../transcode/decode-request.js";
import { encodeResponse } from "../transcode/encode-response.js";
import { answerError, renderConnectError } from "./error-answer.js";
import { requestIdOf, toApiError, type UnexpectedErrorHandler } from "./normalize-error.js";
import { exchangeRequestOf } from "./universal-exchange.js";
import { createRestExchange, type BodyRule } from "./rest-exchange.js";
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

/** The RPC planes write every error of their HTTP routes as the Connect error JSON. */
const render = renderConnectError;

/**
 * The reason a call's context is aborted with once the call has ended. One shared error: aborting
 * without a reason would build a DOMException, stack trace included, on every call.
 */
const callEnded = new ConnectError("the call has ended", Code.Canceled);

/**
 * The transcoding side of the transport: the exchange (rest-exchange.ts) routes the request and
 * reads its body, the same way as for the REST planes; here the request message is built, the
 * implementation called directly (through the interceptors, with no re-encoding or second
 * dispatch) and JSON, SSE or NDJSON written. Every error, a refusal of the exchange or anything
 * thrown, is answered by `answerError` in the Connect error JSON.
 */
export function createRestHandler(
  targets: readonly RestRouteTarget[],
  options: RestHandlerOptions = {},
): UniversalHandlerFn {
  const exchange = createRestExchange(
    targets.map((target) => ({ httpMethod: target.route.httpMethod, template: target.route.template, target })),
    { readMaxBytes: options.readMaxBytes },
  );
  const interceptors = options.interceptors ?? [];
  const heartbeatMs = options.heartbeatMs ?? 15_000;

  return async (universal) => {
    const request = exchangeRequestOf(universal);
    const requestId = requestIdOf(request.header);
    let procedure = `${request.method} ${request.url}`;
    // Errors of the implementation were normalised by the interceptors already; this answers
    // what fails around it (routing, reading, decoding, encoding) on the same terms.
    const onUnexpected = (unexpected: unknown) => options.onUnexpectedError?.(unexpected, { procedure, requestId });
    const fail = (error: unknown) =>
      respond(answerError(error, { requestId, render, onUnexpected }), request.method === "HEAD");
    try {
      const { target, captures, query, head } = exchange.route(request);
      const { route, spec } = target;
      procedure = `/${spec.method.parent.typeName}/${spec.method.name}`;
      const { bytes } = await exchange.readBody(request, route.body === "" ? anyBody : jsonBody);
      const input = decodeRequest(spec.method.input, route, { captures, query, body: bytes });
      const context = createHandlerContext({
        service: spec.method.parent,
        method: spec.method,
        protocolName: "http",
        requestMethod: universal.method,
        url: universal.url,
        requestSignal: universal.signal,
        ...(options.shutdownSignal ? { shutdownSignal: options.shutdownSignal } : {}),
        requestHeader: universal.header,
        ...(options.contextValues ? { contextValues: options.contextValues(universal) } : {}),
      });
      // The context's signal is linked to the request's and the shutdown signal by a listener on
      // each; aborting it when the call ends removes them, as Connect's own handlers do, so the
      // shared shutdown signal holds one listener per call in progress and none per call served.
      // A stream's context ends with the stream.
      let ended = true;
      try {
        if (spec.kind === "unary") {
          const output = await invokeUnaryImplementation(spec, context, input, interceptors);
          const header = new Headers(context.responseHeader);
          context.responseTrailer.forEach((value, key) => header.append(key, value));
          header.set("content-type", "application/json");
          return respond(
            {
              status: 200,
              header,
              body: encoder.encode(JSON.stringify(encodeResponse(spec.method.output, route, output))),
            },
            head,
          );
        }
        if (spec.kind === "server_streaming") {
          const outputs = transformInvokeImplementation(spec, context, interceptors)(createAsyncIterable([input]));
          // Wait for the first message (or failure) so that an error before any output still gets
          // its own HTTP status rather than a 200 with an error frame.
          const iterator = outputs[Symbol.asyncIterator]();
          const first = await iterator.next();
          const framing = negotiateFraming(route.streamFraming ?? "ndjson", request.header.get("accept"));
          const normalize = (error: unknown) => toApiError(error, requestId, onUnexpected);
          const rest = endingWith(iterator, () => context.abort(callEnded));
          ended = false;
          const streamed = streamResponse({
            route,
            output: spec.method.output,
            framing,
            first,
            rest,
            responseHeader: context.responseHeader,
            heartbeatMs,
            normalize,
          });
          if (!head) return streamed;
          await rest.return?.();
          return { status: streamed.status, header: streamed.header };
        }
        throw new ConnectError(`${spec.kind} methods have no HTTP routes`, Code.Unimplemented);
      } finally {
        if (ended) context.abort(callEnded);
      }
    } catch (error) {
      return fail(error);
    }
  };
}

const encoder = new TextEncoder();

/** What a route with a body takes: JSON, `application/json` or a `+json` type (RFC 6839). */
const jsonBody: BodyRule = { contentTypes: ["application/json"], accepts: isJsonMediaType };
/** A route without a body still reads one, within the limit, so that decoding refuses it by name. */
const anyBody: BodyRule = { contentTypes: [], accepts: () => true };

/** A whole answer as connect-node writes it; without its body for a HEAD request. */
function respond(
  answer: { status: number; header: Headers; body: Uint8Array },
  head: boolean,
): UniversalServerResponse {
  return head
    ? { status: answer.status, header: answer.header }
    : { ...answer, body: createAsyncIterable([answer.body]) };
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
