import { Code, ConnectError } from "@connectrpc/connect";
import { expandPathTemplate, type PathTemplate } from "../path-template/index.js";
import { contentTypeFor, isFormMediaType, isJsonMediaType, isTextMediaType, mediaTypeOf } from "../rest/media-type.js";
import type { RestOperation, RestPlane } from "../rest/rest-plane.js";
import { RestCallError } from "./rest-call-error.js";
import { defaultRetryPolicy, withRetries, type RetryPolicy } from "./retry-policy.js";

export interface RestClientOptions<ServerVariables extends object = Readonly<Record<string, string>>> {
  /** Where the plane is served: an origin, optionally with a path prefix (`https://id.example.com`). */
  readonly baseUrl: string;
  /** Values of the variables of the plane's base path (`{org}`, `{pool}`). */
  readonly serverVariables?: ServerVariables;
  /**
   * Sent as `Authorization: Bearer` to the operations that take a credential, never to anonymous
   * ones. A function is asked before every call, so a caller can refresh a short-lived token.
   */
  readonly token?: string | (() => string | undefined | Promise<string | undefined>);
  /** A custom fetch, for proxies, mTLS or tests. */
  readonly fetch?: typeof globalThis.fetch;
  /** Headers sent with every call. */
  readonly headers?: HeadersInit;
  /** Retries of idempotent calls (GET, PUT, DELETE) on 429 and 503; `false` turns them off. */
  readonly retry?: Partial<RetryPolicy> | false;
  /**
   * What a method resolves to. `"result"` (the default, what the generated interfaces describe):
   * `{status, body, headers}`. `"body"` (what the SDK uses, typed by RestBodyClient): the body of
   * the success, as an RPC resolves to its response message; for a success documented without a
   * body (a redirect) its documented headers (`{location}`), else undefined.
   */
  readonly answer?: "result" | "body";
}

export interface RestCallOptions {
  readonly signal?: AbortSignal;
  readonly headers?: HeadersInit;
  /**
   * Called with the status and headers of the answer, success or error, before the method
   * resolves or throws (as connect's `onHeader` is on the RPC planes).
   */
  readonly onHeader?: (headers: Headers, status: number) => void;
}

/** What a `"body"` client's method resolves to for a success result type `R` of the generated interface. */
export type RestAnswerBody<R> = R extends { readonly body: infer Body }
  ? Body
  : R extends { readonly headers: infer Headers }
    ? Headers
    : undefined;

/**
 * A generated REST client's interface as it answers with `answer: "body"`: the same methods and
 * parameters, each resolving to its success's body (see RestAnswerBody) and throwing RestCallError
 * for any other answer.
 */
export type RestBodyClient<Client> = {
  readonly [Method in keyof Client]: Client[Method] extends (...args: infer Args) => Promise<infer Result>
    ? (...args: Args) => Promise<RestAnswerBody<Result>>
    : Client[Method];
};

/** A call's input, as the generated request types describe it. */
interface RestRequest {
  readonly path?: Readonly<Record<string, unknown>>;
  readonly query?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
}

type RestClientMethod = (request?: RestRequest, options?: RestCallOptions) => Promise<unknown>;

const idempotentMethods = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/**
 * Builds the client behind every generated `create<Plane>Client`: one method per operation that
 * expands the path, writes the query, headers and body (JSON where the operation accepts it, else
 * its first media type), and answers `{status, body, headers}` for a success or a documented
 * redirect (or only the body, with `answer: "body"`), or throws RestCallError for any other
 * status. Driven only by the generated route table.
 */
export function createRestClient<Client>(plane: RestPlane, options: RestClientOptions<object>): Client {
  const variables = (options.serverVariables ?? {}) as Readonly<Record<string, unknown>>;
  const base = plane.basePath.source === "/" ? "" : expand(plane.basePath, variables, "server variable");
  const prefix = options.baseUrl.replace(/\/+$/, "") + base;
  const policy: RetryPolicy =
    options.retry === false ? { ...defaultRetryPolicy, maxRetries: 0 } : { ...defaultRetryPolicy, ...options.retry };
  const client: Record<string, RestClientMethod> = {};
  for (const operation of plane.operations) {
    const once = (request: RestRequest, callOptions: RestCallOptions | undefined) =>
      callOnce(operation, prefix, options, request, callOptions);
    client[operation.operationId] = idempotentMethods.has(operation.httpMethod)
      ? (request = {}, callOptions) => withRetries(() => once(request, callOptions), policy, callOptions?.signal)
      : (request = {}, callOptions) => once(request, callOptions);
  }
  // The generated interface describes exactly these methods, from the same route table.
  return client as Client;
}

async function callOnce(
  operation: RestOperation,
  prefix: string,
  options: RestClientOptions<object>,
  request: RestRequest,
  callOptions: RestCallOptions | undefined,
): Promise<unknown> {
  const path = expand(operation.template, request.path ?? {}, "path");
  const query = new URLSearchParams();
  const header = new Headers(options.headers);
  new Headers(callOptions?.headers).forEach((value, name) => header.set(name, value));
  for (const parameter of operation.parameters) {
    if (parameter.in === "query") {
      const value = request.query?.[parameter.name];
      for (const item of Array.isArray(value) ? value : [value])
        if (item !== undefined && item !== null) query.append(parameter.name, String(item));
    } else if (parameter.in === "header") {
      const value = request.headers?.[parameter.name];
      if (value !== undefined && value !== null) header.set(parameter.name, String(value));
    }
  }
  const token = typeof options.token === "function" ? await options.token() : options.token;
  if (operation.auth !== "none" && token !== undefined) header.set("authorization", `Bearer ${token}`);
  let body: string | undefined;
  if (operation.requestBody && request.body !== undefined) {
    const types = operation.requestBody.contentTypes;
    const mediaType = types.find(isJsonMediaType) ?? types[0] ?? "application/json";
    header.set("content-type", contentTypeFor(mediaType));
    body = encodeBody(mediaType, request.body);
  }
  const search = query.size > 0 ? `?${query.toString()}` : "";
  // A documented redirect is a result to return (its Location is the point), not one to follow.
  const redirects = operation.responses.some((r) => typeof r.status === "number" && r.status >= 300 && r.status < 400);
  let response: Response;
  try {
    response = await (options.fetch ?? globalThis.fetch)(`${prefix}${path}${search}`, {
      method: operation.httpMethod,
      headers: header,
      ...(body === undefined ? {} : { body }),
      ...(callOptions?.signal ? { signal: callOptions.signal } : {}),
      redirect: redirects ? "manual" : "follow",
    });
  } catch (error) {
    if (callOptions?.signal?.aborted) throw ConnectError.from(error, Code.Canceled);
    // The request may never have left; only idempotent calls are retried on this.
    throw ConnectError.from(error, Code.Unavailable);
  }
  const responseBody = await readResponseBody(response);
  callOptions?.onHeader?.(response.headers, response.status);
  // Errors, and a redirect the operation does not document (one fetch could not follow). A
  // browser answers a documented redirect opaquely (status 0, no readable Location): not thrown.
  const documented = operation.responses.find((r) => r.status === response.status);
  if (response.status >= 400 || (response.status >= 300 && documented === undefined)) {
    throw new RestCallError(operation.operationId, response.status, responseBody, response.headers);
  }
  const spec = documented ?? operation.responses.find((r) => r.status === "default");
  const headers: Record<string, string | number> = {};
  for (const { name, numeric } of spec?.headers ?? []) {
    const value = response.headers.get(name);
    if (value !== null)
      headers[name] = numeric && value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  if (options.answer === "body") {
    if (spec === undefined || spec.contentTypes.length > 0) return responseBody;
    return spec.headers.length > 0 ? headers : undefined;
  }
  return {
    status: response.status,
    ...(responseBody === undefined ? {} : { body: responseBody }),
    ...(spec && spec.headers.length > 0 ? { headers } : {}),
  };
}

function expand(template: PathTemplate, values: Readonly<Record<string, unknown>>, what: string): string {
  try {
    return expandPathTemplate(template, (name) => {
      const value = values[name];
      return value === undefined || value === null ? undefined : String(value);
    });
  } catch (error) {
    throw new ConnectError(
      `${what} ${error instanceof Error ? error.message : String(error)}`,
      Code.InvalidArgument,
      undefined,
      undefined,
      error,
    );
  }
}

function encodeBody(mediaType: string, body: unknown): string {
  if (isJsonMediaType(mediaType)) return JSON.stringify(body);
  if (isFormMediaType(mediaType)) {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      for (const item of Array.isArray(value) ? value : [value])
        if (item !== undefined && item !== null) form.append(name, String(item));
    }
    return form.toString();
  }
  return String(body);
}

async function readResponseBody(response: Response): Promise<unknown> {
  const mediaType = mediaTypeOf(response.headers.get("content-type"));
  if (isJsonMediaType(mediaType)) {
    const text = await response.text();
    if (text === "") return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if (isTextMediaType(mediaType) || mediaType === "") {
    const text = await response.text();
    return text === "" ? undefined : text;
  }
  return new Uint8Array(await response.arrayBuffer());
}
