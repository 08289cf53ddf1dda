import type * as http from "node:http";
import type * as http2 from "node:http2";
import { NodeRequestHeaders } from "./node-request-headers.js";
import type { ExchangeRequest } from "./rest-exchange.js";

export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;

/** One request as a REST plane reads it: what the exchange reads, and whether the client is still there. */
export interface PlaneRequest extends ExchangeRequest {
  /** Aborted when the client goes away before the answer is written. */
  readonly signal: AbortSignal;
}

/** A REST plane's answer: one status, its headers and a whole body (REST planes do not stream). */
export interface PlaneResponse {
  readonly status: number;
  readonly header: Headers;
  /** A string is written as UTF-8, joined to the head in one write (the JSON of a unary answer). */
  readonly body?: Uint8Array | string;
}

/**
 * A node:http or node:http2 request as a {@link PlaneRequest}. REST planes read it directly rather
 * than through connect-node's universal request: they need neither its async-iterable body nor an
 * abort on every finished response (each abort builds a DOMException with a stack), which
 * together cost about a tenth of a token refresh's CPU (bench/RESULTS.md).
 */
export function planeRequestOf(request: NodeRequest, response: NodeResponse): PlaneRequest {
  const controller = new AbortController();
  response.once("close", () => {
    // Not `writableFinished`: node:http2 reports a cancelled stream's response as finished.
    if (!response.writableEnded) controller.abort();
  });
  return new NodePlaneRequest(request, response, controller.signal);
}

/**
 * A node:http or node:http2 request as the exchange reads it, with no signal: the transcoded
 * HTTP routes (rest-handler.ts) link the client's going away to the call's own context instead,
 * so that a call holds one AbortController rather than one per layer.
 */
export function exchangeRequestOfNode(request: NodeRequest, response: NodeResponse): ExchangeRequest {
  return new NodeExchangeRequest(request, response);
}

/**
 * A class rather than an object literal with a `readBody` closure: the server runs through a
 * loader that names every such closure as it is made, at a cost on every request.
 */
class NodeExchangeRequest implements ExchangeRequest {
  readonly method: string;
  readonly url: string;
  readonly header: Headers;
  readonly #request: NodeRequest;
  readonly #response: NodeResponse;

  constructor(request: NodeRequest, response: NodeResponse) {
    this.method = request.method ?? "GET";
    this.url = request.url ?? "/";
    this.header = new NodeRequestHeaders(request.headers);
    this.#request = request;
    this.#response = response;
  }

  async readBody(readMaxBytes: number): Promise<Uint8Array | "too-large"> {
    const request = this.#request;
    const response = this.#response;
    const body = await readBody(request, readMaxBytes);
    // Over HTTP/1.1 the unread rest would be drained to keep the connection: close it instead.
    if (body === "too-large" && request.httpVersionMajor === 1 && !response.headersSent)
      response.setHeader("connection", "close");
    return body;
  }
}

class NodePlaneRequest extends NodeExchangeRequest implements PlaneRequest {
  constructor(
    request: NodeRequest,
    response: NodeResponse,
    readonly signal: AbortSignal,
  ) {
    super(request, response);
  }
}

/** Writes the answer over whatever headers the listener set already (request id, CORS). */
export function writePlaneResponse(response: NodeResponse, answer: PlaneResponse): void {
  const headers: Record<string, string | string[]> = {};
  answer.header.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = answer.header.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  const { body } = answer;
  if (body !== undefined)
    headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
  // One call for both node:http and node:http2, whose writeHead overloads differ.
  (response as http.ServerResponse).writeHead(answer.status, headers);
  if (body !== undefined) response.end(body);
  else response.end();
}

const NO_BODY = new Uint8Array(0);

function readBody(request: NodeRequest, readMaxBytes: number): Promise<Uint8Array | "too-large"> {
  const length = request.headers["content-length"];
  // An HTTP/1.1 request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112
  // section 6.3): nothing to wait for.
  if (length === undefined && request.httpVersionMajor === 1 && request.headers["transfer-encoding"] === undefined)
    return Promise.resolve(NO_BODY);
  if (Number(length) > readMaxBytes) return Promise.resolve("too-large");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (answer: Uint8Array | "too-large") => {
      settled = true;
      resolve(answer);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= readMaxBytes) return void chunks.push(chunk);
      // The rest of an oversized body is left unread; node discards it once the answer is sent.
      request.off("data", onData);
      settle("too-large");
    };
    request.on("data", onData);
    request.once("end", () => settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    request.once("error", reject);
    // Every request closes, most after their end: only an early close is a failure.
    request.once("close", () => settled || reject(new Error("the client closed the request before its body ended")));
  });
}
