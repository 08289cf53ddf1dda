import type { Dispatcher } from "undici";
import {
  createGuardedDispatcher,
  PrivateNetworkError,
  privateHostKind,
  privateNetworkErrorOf,
} from "../../../net/private-network.js";
import { formatDuration, tryParseDuration as parseDuration } from "../dsl/duration.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { formatBytes, readCappedBody } from "./response-body.js";
import { invalidInput, ToolError } from "./tool-error.js";
import { describe } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool, ToolContext } from "./tool.js";

/** Largest response body the tool reads; a bigger one fails the call (write it elsewhere first). */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;
/** Longest `timeout` a call may ask for; the tool's runtime limit sits a little above it. */
export const MAX_REQUEST_TIMEOUT_MS = 5 * 60_000;

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** Methods that are not safe (RFC 9110 9.2.1): a retried step could repeat their effect. */
const UNSAFE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export interface HttpRequestToolOptions {
  readonly fetch?: typeof fetch;
  /** The operator's --allow-private-network: true lets calls reach loopback, private and link-local hosts. */
  readonly allowPrivateNetwork?: boolean;
  /** Where connections are made; default createGuardedDispatcher with allowPrivateNetwork. */
  readonly dispatcher?: Dispatcher;
}

/**
 * `http.request`: one HTTP(S) request. Any status is a result, not a failure (the script decides
 * what a 404 means); failures are a refused input, an unreachable target (`unavailable`), the
 * request's timeout, or a response body over 10 MiB. Unsafe methods carry `idempotency-key:
 * <thread_id:step_path>` unless the call sets that header itself, so a retried step is safe at a
 * target that deduplicates (the IETF httpapi Idempotency-Key draft, Stripe, PayPal).
 *
 * Unless the operator allows private networks, a call may not reach the server's own machine or
 * network (net/private-network.ts): a host written as such an address, or `localhost`, is refused
 * before connecting, and a name resolving to one, on the first request or any redirect hop, is
 * refused when the connection is made.
 */
export function createHttpRequestTool(options: HttpRequestToolOptions = {}): Tool {
  const fetchFn = options.fetch ?? fetch;
  const allowPrivateNetwork = options.allowPrivateNetwork ?? false;
  const network = {
    allowPrivateNetwork,
    dispatcher: options.dispatcher ?? createGuardedDispatcher({ allowPrivateNetwork }),
  };
  return {
    name: "http.request",
    version: NATIVE_TOOL_VERSION,
    description:
      "Sends one HTTP(S) request and returns the status, headers and body (parsed when the response is JSON). " +
      `Non-2xx statuses are returned, not raised. Response bodies over ${formatBytes(MAX_RESPONSE_BYTES)} fail the call. ` +
      "POST, PUT, PATCH and DELETE carry an idempotency-key header of thread_id:step_path.",
    inputs: [
      {
        name: "method",
        type: "string",
        required: false,
        defaultValue: "GET",
        description: "GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS (any case)",
      },
      { name: "url", type: "string", required: true, description: "absolute http or https URL" },
      {
        name: "headers",
        type: "object",
        required: false,
        defaultValue: {},
        description: "request headers, name to string value",
      },
      {
        name: "query",
        type: "object",
        required: false,
        defaultValue: {},
        description:
          "query parameters added to the URL: a string, number or boolean, or an array of them for a repeated parameter",
      },
      {
        name: "body",
        type: "",
        required: false,
        description:
          "a string is sent as text (text/plain unless content-type is set), any other JSON value as JSON (application/json); null means no body; not allowed with GET or HEAD",
      },
      {
        name: "timeout",
        type: "string",
        required: false,
        defaultValue: "30s",
        description: `time allowed for the whole exchange, such as 10s; at most ${formatDuration(MAX_REQUEST_TIMEOUT_MS)}`,
      },
    ],
    outputs: [
      { name: "status", type: "integer", required: true, description: "HTTP status code" },
      {
        name: "headers",
        type: "object",
        required: true,
        description: 'response headers by lower-case name; repeated headers joined with ", "',
      },
      {
        name: "body",
        type: "",
        required: true,
        description:
          "the parsed JSON when the response's content-type is JSON and it parses, else the text (empty for HEAD)",
      },
      {
        name: "durationMs",
        type: "integer",
        required: true,
        description: "time from sending to the end of the body, in milliseconds",
      },
    ],
    runtime: nativeRuntime("httpRequest", MAX_REQUEST_TIMEOUT_MS + 30_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    invoke: (input, context) => httpRequest(fetchFn, network, input, context),
  };
}

interface Network {
  readonly allowPrivateNetwork: boolean;
  readonly dispatcher: Dispatcher;
}

async function httpRequest(
  fetchFn: typeof fetch,
  network: Network,
  input: JsonObject,
  context: ToolContext,
): Promise<JsonValue> {
  const method = String(input.method).toUpperCase();
  if (!METHODS.has(method))
    throw invalidInput(`http.request: method ${JSON.stringify(input.method)} is not one of ${[...METHODS].join(", ")}`);
  const url = requestUrl(String(input.url), input.query as JsonObject);
  const hostKind = network.allowPrivateNetwork ? undefined : privateHostKind(url.hostname);
  if (hostKind !== undefined)
    throw invalidInput(
      `http.request: url refused: ${new PrivateNetworkError(url.hostname, url.hostname, hostKind).message}`,
    );
  const timeoutMs = requestTimeout(String(input.timeout));
  const headers = requestHeaders(input.headers as JsonObject);
  const body = requestBody(method, input.body, headers);
  if (UNSAFE_METHODS.has(method) && !headers.has("idempotency-key"))
    headers.set("idempotency-key", context.idempotencyKey);

  const target = `${method} ${url.origin}${url.pathname}`; // no query string: it may hold a secret
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = AbortSignal.any([context.signal, deadline.signal]);
  const started = performance.now();
  try {
    // Node's fetch takes undici's `dispatcher`, which the DOM RequestInit type does not declare.
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method,
      headers,
      body,
      signal,
      redirect: "follow",
      dispatcher: network.dispatcher,
    };
    const response = await fetchFn(url, init);
    const bytes = await readCappedBody(
      response,
      MAX_RESPONSE_BYTES,
      `http.request: the response body of ${target}`,
      context.memory,
    );
    return {
      status: response.status,
      headers: responseHeaders(response.headers),
      body: responseBody(response.headers.get("content-type"), bytes),
      durationMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    if (deadline.signal.aborted)
      throw new ToolError("timeout", `http.request: ${target} did not answer within ${formatDuration(timeoutMs)}`);
    if (error instanceof ToolError) throw error;
    const refused = privateNetworkErrorOf(error);
    if (refused !== undefined) throw invalidInput(`http.request: ${target} refused: ${refused.message}`);
    throw new ToolError("unavailable", `http.request: ${target} failed: ${networkReason(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

function requestUrl(text: string, query: JsonObject): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidInput(`http.request: url ${JSON.stringify(text)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw invalidInput(`http.request: url must use http or https, got ${JSON.stringify(url.protocol.slice(0, -1))}`);
  for (const [name, value] of Object.entries(query)) {
    for (const [index, item] of (Array.isArray(value) ? value : [value]).entries()) {
      if (typeof item !== "string" && typeof item !== "number" && typeof item !== "boolean") {
        const field = Array.isArray(value)
          ? `query[${JSON.stringify(name)}][${index}]`
          : `query[${JSON.stringify(name)}]`;
        throw invalidInput(`http.request: ${field} must be a string, number or boolean, got ${describe(item)}`);
      }
      url.searchParams.append(name, String(item));
    }
  }
  return url;
}

function requestTimeout(text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0)
    throw invalidInput(`http.request: timeout ${JSON.stringify(text)} is not a positive duration such as 30s`);
  if (ms > MAX_REQUEST_TIMEOUT_MS)
    throw invalidInput(
      `http.request: timeout ${text} is longer than the maximum of ${formatDuration(MAX_REQUEST_TIMEOUT_MS)}`,
    );
  return ms;
}

function requestHeaders(given: JsonObject): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(given)) {
    if (typeof value !== "string")
      throw invalidInput(`http.request: headers[${JSON.stringify(name)}] must be a string, got ${describe(value)}`);
    try {
      headers.append(name, value);
    } catch {
      throw invalidInput(`http.request: headers[${JSON.stringify(name)}] is not a valid header name and value`);
    }
  }
  return headers;
}

function requestBody(method: string, body: JsonValue | undefined, headers: Headers): string | undefined {
  if (body === undefined || body === null) return undefined; // null reads as "no body", as most clients take it
  if (method === "GET" || method === "HEAD") throw invalidInput(`http.request: a ${method} request cannot have a body`);
  const text = typeof body === "string";
  if (!headers.has("content-type"))
    headers.set("content-type", text ? "text/plain; charset=utf-8" : "application/json");
  return text ? body : JSON.stringify(body);
}

function responseHeaders(headers: Headers): JsonObject {
  const joined = new Map<string, string>();
  for (const [name, value] of headers) {
    const earlier = joined.get(name);
    joined.set(name, earlier === undefined ? value : `${earlier}, ${value}`);
  }
  return Object.fromEntries(joined); // own properties even for a header named __proto__
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function responseBody(contentType: string | null, bytes: Uint8Array): JsonValue {
  const text = new TextDecoder().decode(bytes);
  if (contentType === null || !JSON_TYPE.test(contentType) || text.trim() === "") return text;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text; // a server that mislabels its body still gets its text through
  }
}

/** The useful part of a fetch failure: undici hides the system error (ECONNREFUSED...) in `cause`. */
function networkReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return code !== undefined && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return error.message;
}
