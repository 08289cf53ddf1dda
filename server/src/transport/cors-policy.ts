import { cors } from "@connectrpc/connect";

/** The headers a browser request may carry: Connect's and gRPC-web's, plus ours. */
export const CORS_ALLOWED_HEADERS: readonly string[] = unique([
  ...cors.allowedHeaders,
  ...cors.exposedHeaders,
  "authorization",
  "x-organization-name",
  "x-request-id",
  "content-type",
]);

/** The response headers browser code may read: gRPC-web's status trailers-as-headers, and ours. */
export const CORS_EXPOSED_HEADERS: readonly string[] = unique([...cors.exposedHeaders, "x-request-id", "retry-after"]);

export const CORS_ALLOWED_METHODS: readonly string[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Browsers cache a preflight for at most 2 hours (Chromium's cap); longer values are clipped. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/** The answer to a request's `Origin`, as headers to set on the response. */
export type CorsDecision =
  | { readonly kind: "not-cors" }
  | { readonly kind: "preflight-allowed"; readonly headers: Readonly<Record<string, string>> }
  | { readonly kind: "preflight-denied" }
  | { readonly kind: "actual"; readonly headers: Readonly<Record<string, string>> };

export interface CorsRequest {
  readonly method: string;
  readonly origin: string | undefined;
  readonly requestMethod: string | undefined;
  readonly requestHeaders: string | undefined;
}

/**
 * CORS by an exact list of origins (`*` allows any). An allowed origin is echoed, never `*`, with
 * `vary: origin` so that caches keep one answer per origin. A preflight from another origin gets
 * no CORS headers (the transport answers it 403); an actual request from another origin is served
 * without them, and the browser withholds the response from the page.
 */
export function createCorsPolicy(origins: readonly string[]): (request: CorsRequest) => CorsDecision {
  const anyOrigin = origins.includes("*");
  const allowedOrigins = new Set(origins);
  const allowedHeaders = new Set(CORS_ALLOWED_HEADERS);
  const exposed = CORS_EXPOSED_HEADERS.join(", ");
  return (request) => {
    const { origin } = request;
    if (origin === undefined) return { kind: "not-cors" };
    const allowed = anyOrigin || allowedOrigins.has(origin);
    const isPreflight = request.method === "OPTIONS" && request.requestMethod !== undefined;
    if (isPreflight && !allowed) return { kind: "preflight-denied" };
    if (!allowed) return { kind: "not-cors" };
    if (!isPreflight) {
      return {
        kind: "actual",
        headers: { "access-control-allow-origin": origin, vary: "origin", "access-control-expose-headers": exposed },
      };
    }
    const requested = (request.requestHeaders ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean);
    // Echo the request's list when every name is allowed; otherwise answer the allowed list, so the
    // browser's error ("x is not allowed by Access-Control-Allow-Headers") points at the culprit.
    const allowHeaders = requested.every((name) => allowedHeaders.has(name)) ? requested : CORS_ALLOWED_HEADERS;
    const headers: Record<string, string> = {
      "access-control-allow-origin": origin,
      vary: "origin, access-control-request-method, access-control-request-headers",
      "access-control-allow-methods": CORS_ALLOWED_METHODS.join(", "),
      "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
    };
    if (allowHeaders.length > 0) headers["access-control-allow-headers"] = allowHeaders.join(", ");
    return { kind: "preflight-allowed", headers };
  };
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names.map((name) => name.toLowerCase()))];
}
