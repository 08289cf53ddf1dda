import type * as http from "node:http";
import {
  Code,
  ConnectError,
  createContextValues,
  type ContextValues,
  type Interceptor,
  type MethodImplSpec,
} from "@connectrpc/connect";
import {
  createAsyncIterable,
  transformInvokeImplementation,
  type UniversalHandlerFn,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import type { HttpRoute } from "../http-route.js";
import { isJsonMediaType } from "../rest/media-type.js";
import { decodeRequest } from "../transcode/decode-request.js";
import { encodeResponse } from "../transcode/encode-response.js";
import { CallContext } from "./call-context.js";
import { answerError, renderConnectError } from "./error-answer.js";
import { requestIdOf, toApiError, type UnexpectedErrorHandler } from "./normalize-error.js";
import { exchangeRequestOfNode, writePlaneResponse, type NodeRequest, type NodeResponse } from "./node-exchange.js";
import { exchangeRequestOf } from "./universal-exchange.js";
import { createRestExchange, type BodyRule, type ExchangeRequest } from "./rest-exchange.js";
import { negotiateFraming, streamResponse } from "./stream-response.js";
import { createUnaryInvoker } from "./unary-invoker.js";

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
  readonly contextValues?: (request: ExchangeRequest) => ContextValues;
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

/** A client that went away before its call ended: the reason its context is aborted with. */
const clientGone = new ConnectError("the client went away", Code.Canceled);

/**
 * How one call learns that its client went away: the adapter sets `gone` and aborts `call`, the
 * call in progress, which the call sets when its context exists and clears when it ends.
 */
interface ClientWatch {
  gone: boolean;
  call: CallContext | undefined;
  /** Called once the call has ended, to stop watching. */
  readonly release?: () => void;
}

/** One answer: a whole body (unary, errors), a stream of frames, or none (HEAD). */
interface RestAnswer {
  readonly status: number;
  readonly header: Headers;
  readonly body?: Uint8Array | string | AsyncIterable<Uint8Array>;
}

type RestCallFn = (request: ExchangeRequest, watch: ClientWatch | undefined) => Promise<RestAnswer>;

/**
 * The transcoding side of the transport, for connect-node's universal requests (tests, benches,
 * frameworks). The server's router serves the same routes on node's own request and response
 * through {@link createRestNodeHandler}; both run the one call below.
 */
export function createRestHandler(
  targets: readonly RestRouteTarget[],
  options: RestHandlerOptions = {},
): UniversalHandlerFn {
  const call = createRestCall(targets, options);
  return async (universal) => {
    const { signal } = universal;
    const onAbort = () => {
      watch.gone = true;
      watch.call?.abort(clientGone);
    };
    const watch: ClientWatch = {
      gone: signal.aborted,
      call: undefined,
      release: () => signal.removeEventListener("abort", onAbort),
    };
    if (!signal.aborted) signal.addEventListener("abort", onAbort);
    const answer = await call(exchangeRequestOf(universal), watch);
    // No call in progress (it ended, or never began): stop watching; a stream's end does otherwise.
    if (!watch.call) watch.release?.();
    const { body } = answer;
    if (body === undefined) return { status: answer.status, header: answer.header };
    return {
      status: answer.status,
      header: answer.header,
      body:
        typeof body === "string"
          ? createAsyncIterable([encoder.encode(body)])
          : body instanceof Uint8Array
            ? createAsyncIterable([body])
            : body,
    } satisfies UniversalServerResponse;
  };
}

/**
 * The HTTP routes on node:http / node:http2 directly: the request is read by the same exchange as
 * the REST planes' (node-exchange.ts), a whole answer is written in one `end`, and a stream is
 * written frame by frame, waiting for the socket to drain. No universal request or response is
 * built: connect-node's conversion costs three AbortControllers, Headers copies and a DOMException
 * on every response close (bench/RESULTS.md). The call's context is aborted when the client goes
 * away before the answer is written.
 */
export function createRestNodeHandler(
  targets: readonly RestRouteTarget[],
  options: RestHandlerOptions = {},
): (request: NodeRequest, response: NodeResponse) => void {
  const call = createRestCall(targets, options);
  // No closure below is assigned a name: the server runs through a loader that names each such
  // function as it is made, at a cost of its own on every request (call-context.ts).
  return (request, response) => {
    const watch: ClientWatch = { gone: false, call: undefined };
    response.once("close", () => {
      // Not `writableFinished`: node:http2 reports a cancelled stream's response as finished.
      if (response.writableEnded) return;
      watch.gone = true;
      watch.call?.abort(clientGone);
    });
    call(exchangeRequestOfNode(request, response), watch)
      .then((answer) => {
        const { body } = answer;
        if (body === undefined || typeof body === "string" || body instanceof Uint8Array) {
          writePlaneResponse(response, { status: answer.status, header: answer.header, body });
          return;
        }
        return writeStream(response, answer.status, answer.header, body, watch);
      })
      .catch(() => {
        // The client went away while the body was read, or mid-answer: nothing more to send.
        response.destroy();
      });
  };
}

/**
 * Runs one call on the HTTP routes: the exchange (rest-exchange.ts) routes the request and reads
 * its body, the same way as for the REST planes; here the request message is built, the
 * implementation called directly (through the interceptors, with no re-encoding or second
 * dispatch) and JSON, SSE or NDJSON answered. Every error, a refusal of the exchange or anything
 * thrown, is answered by `answerError` in the Connect error JSON. The call's context
 * (call-context.ts) is aborted when the client goes away, when the server shuts down and when the
 * call or its stream ends.
 */
function createRestCall(targets: readonly RestRouteTarget[], options: RestHandlerOptions): RestCallFn {
  const interceptors = options.interceptors ?? [];
  // What each route serves, prepared once: its procedure's name and, for a unary method, the
  // interceptor chain around its implementation.
  const exchange = createRestExchange(
    targets.map((target) => ({
      httpMethod: target.route.httpMethod,
      template: target.route.template,
      target: {
        ...target,
        procedure: `/${target.spec.method.parent.typeName}/${target.spec.method.name}`,
        invoke: target.spec.kind === "unary" ? createUnaryInvoker(target.spec, interceptors) : undefined,
      },
    })),
    { readMaxBytes: options.readMaxBytes },
  );
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const { shutdownSignal, onUnexpectedError } = options;

  return async (request, watch) => {
    let procedure: string | undefined;
    try {
      const { target, captures, query, head } = exchange.route(request);
      const { route, spec } = target;
      procedure = target.procedure;
      const { bytes } = await exchange.readBody(request, route.body === "" ? anyBody : jsonBody);
      const input = decodeRequest(spec.method.input, route, { captures, query, body: bytes });
      const call = new CallContext({
        method: spec.method,
        requestMethod: request.method,
        url: request.url,
        requestHeader: request.header,
        values: options.contextValues?.(request) ?? createContextValues(),
        shutdownSignal,
      });
      const { context } = call;
      if (watch?.gone) call.abort(clientGone);
      else if (watch) watch.call = call;
      // A stream's context ends with the stream.
      let ended = true;
      try {
        if (target.invoke) {
          const output = await target.invoke(context, input);
          // The context is done with: its headers are the answer's, with no copy.
          const header = context.responseHeader;
          context.responseTrailer.forEach((value, key) => header.append(key, value));
          header.set("content-type", "application/json");
          // Left a string: node writes it with the head in one write, and no copy is encoded here.
          const body = JSON.stringify(encodeResponse(spec.method.output, route, output));
          return head ? { status: 200, header } : { status: 200, header, body };
        }
        if (spec.kind === "server_streaming") {
          const outputs = transformInvokeImplementation(spec, context, interceptors)(createAsyncIterable([input]));
          // Wait for the first message (or failure) so that an error before any output still gets
          // its own HTTP status rather than a 200 with an error frame.
          const iterator = outputs[Symbol.asyncIterator]();
          const first = await iterator.next();
          const framing = negotiateFraming(route, request.header.get("accept"));
          const requestId = requestIdOf(request.header);
          const where = { procedure, requestId };
          const normalize = (error: unknown) =>
            toApiError(error, requestId, (unexpected) => onUnexpectedError?.(unexpected, where));
          const rest = endingWith(iterator, () => endCall(call, watch));
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
        if (ended) endCall(call, watch);
      }
    } catch (error) {
      // Errors of the implementation were normalised by the interceptors already; this answers
      // what fails around it (routing, reading, decoding, encoding) on the same terms.
      const requestId = requestIdOf(request.header);
      const where = { procedure: procedure ?? `${request.method} ${request.url}`, requestId };
      const answer = answerError(error, {
        requestId,
        render,
        onUnexpected: (unexpected: unknown) => onUnexpectedError?.(unexpected, where),
      });
      return request.method === "HEAD" ? { status: answer.status, header: answer.header } : answer;
    }
  };
}

/** The call has ended: it stops watching its client, and its context is aborted. */
function endCall(call: CallContext, watch: ClientWatch | undefined): void {
  if (watch) {
    watch.call = undefined;
    watch.release?.();
  }
  call.end(callEnded);
}

const encoder = new TextEncoder();

/** What a route with a body takes: JSON, `application/json` or a `+json` type (RFC 6839). */
const jsonBody: BodyRule = { contentTypes: ["application/json"], accepts: isJsonMediaType };
/** A route without a body still reads one, within the limit, so that decoding refuses it by name. */
const anyBody: BodyRule = { contentTypes: [], accepts: () => true };

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

/**
 * Writes a stream's frames as they come, each flushed, waiting for the socket to drain when its
 * buffer is full. A client that goes away stops the writing: leaving the loop returns the frames'
 * iterator, which ends the implementation's iteration and the call's context.
 */
async function writeStream(
  response: NodeResponse,
  status: number,
  header: Headers,
  frames: AsyncIterable<Uint8Array>,
  watch: ClientWatch,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  header.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = header.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  // One call for both node:http and node:http2, whose writeHead overloads differ.
  (response as http.ServerResponse).writeHead(status, headers);
  for await (const frame of frames) {
    // node:http2's response has no `destroyed`: the handler's own flag says the client left.
    if (watch.gone || response.writableEnded) break;
    if (!(response as http.ServerResponse).write(frame)) await drained(response, watch);
  }
  if (!watch.gone && !response.writableEnded) response.end();
}

/** Resolves once the response can take more, or is closed (at once, if it closed already). */
function drained(response: NodeResponse, watch: ClientWatch): Promise<void> {
  return new Promise((resolve) => {
    if (watch.gone) return resolve();
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}
