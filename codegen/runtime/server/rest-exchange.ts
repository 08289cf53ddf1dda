import { createPathMatcher, type PathTemplate } from "../path-template/index.js";
import { mediaTypeOf } from "../rest/media-type.js";
import { RequestRefusal } from "./request-refusal.js";
import { pathOfRequestTarget, splitRequestTarget } from "./request-target.js";

/** One route of a table: a method, a template, and what the stack serves it with. */
export interface ExchangeRoute<T> {
  readonly httpMethod: string;
  readonly template: PathTemplate;
  readonly target: T;
}

/** A request as the exchange reads it; each stack adapts its own request object to it. */
export interface ExchangeRequest {
  readonly method: string;
  /** The raw request target: the router must see the path exactly as sent. */
  readonly url: string;
  readonly header: Headers;
  /** The whole body, or "too-large" as soon as it passes `readMaxBytes` (before reading it, when its length says so). */
  readBody(readMaxBytes: number): Promise<Uint8Array | "too-large">;
}

/** A request that reached a route. */
export interface RoutedRequest<T> {
  readonly target: T;
  /** Field path to decoded value, for every variable of the matched template. */
  readonly captures: Record<string, string>;
  readonly query: URLSearchParams;
  /** A HEAD request served by the route's GET: answer without a body (RFC 9110 section 9.3.2). */
  readonly head: boolean;
}

/** What a route takes as a body. */
export interface BodyRule {
  /** The media types it takes, as a 415 answer names them. */
  readonly contentTypes: readonly string[];
  /** Whether it takes a media type; by default, whether it is one of `contentTypes`. */
  readonly accepts?: (mediaType: string) => boolean;
}

export interface RequestBody {
  readonly bytes: Uint8Array;
  /** Of the request's Content-Type, lower case, without parameters; `""` when there is none. */
  readonly mediaType: string;
}

export interface RestExchange<T> {
  /** Whether some route has the request's path, whatever its method. */
  knowsPath(method: string, url: string): boolean;
  /** @throws RequestRefusal for an unknown path (404), another method (405), a malformed segment (400). */
  route(request: Pick<ExchangeRequest, "method" | "url">): RoutedRequest<T>;
  /**
   * The body under the route's rule; an empty one for a route without a body, which is not read.
   *
   * @throws RequestRefusal for a body over `readMaxBytes` (413) or of a media type the route does not take (415).
   */
  readBody(request: ExchangeRequest, rule: BodyRule | undefined): Promise<RequestBody>;
}

export interface RestExchangeOptions {
  /** Largest request body accepted; beyond it the answer is 413. */
  readonly readMaxBytes?: number;
}

export const DEFAULT_READ_MAX_BYTES = 16 * 1024 * 1024;
const EMPTY = new Uint8Array(0);

/**
 * The one reading of an HTTP request for both REST stacks, the transcoded RPC routes
 * (rest-handler.ts) and the OpenAPI planes (rest-plane-handler.ts): routing with 404, 405 and
 * `Allow`, HEAD served by GET, the body-size limit and the media type. Every refusal is a
 * RequestRefusal, answered through the one error path (error-answer.ts), so the two stacks
 * answer the same failure the same way.
 */
export function createRestExchange<T>(
  routes: readonly ExchangeRoute<T>[],
  options: RestExchangeOptions = {},
): RestExchange<T> {
  const matcher = createPathMatcher(routes);
  const readMaxBytes = options.readMaxBytes ?? DEFAULT_READ_MAX_BYTES;
  return {
    knowsPath(method, url) {
      return matcher.match(method, pathOfRequestTarget(url)).kind !== "not-found";
    },
    route(request) {
      const { pathname, searchParams } = splitRequestTarget(request.url);
      let match = matcher.match(request.method, pathname);
      // HEAD is GET without the body, unless the table gives HEAD a route of its own.
      const head =
        request.method === "HEAD" && match.kind === "method-not-allowed" && match.allowedMethods.includes("GET");
      if (head) match = matcher.match("GET", pathname);
      switch (match.kind) {
        case "matched":
          return { target: match.target, captures: match.captures, query: searchParams, head };
        case "not-found":
          throw new RequestRefusal("not-found", `no route for ${request.method} ${pathname}`);
        case "method-not-allowed": {
          const allow = match.allowedMethods.join(", ");
          throw new RequestRefusal(
            "method-not-allowed",
            `${request.method} is not allowed on ${pathname}; allowed: ${allow}`,
            { allow },
          );
        }
        case "bad-path":
          throw new RequestRefusal("bad-path", match.reason);
      }
    },
    async readBody(request, rule) {
      const mediaType = mediaTypeOf(request.header.get("content-type"));
      if (!rule) return { bytes: EMPTY, mediaType };
      const bytes = await request.readBody(readMaxBytes);
      if (bytes === "too-large") throw bodyTooLarge(readMaxBytes);
      const accepts = rule.accepts ?? ((type: string) => rule.contentTypes.includes(type));
      if (bytes.byteLength > 0 && !accepts(mediaType)) {
        const accepted = rule.contentTypes.join(", ");
        throw new RequestRefusal(
          "unsupported-media-type",
          `unsupported content type "${mediaType}": send ${accepted}`,
          { accept: accepted },
        );
      }
      return { bytes, mediaType };
    },
  };
}

/** The refusal of a body over the limit, also for a listener that refuses it by its declared length before routing. */
export function bodyTooLarge(readMaxBytes: number): RequestRefusal {
  return new RequestRefusal("too-large", `request body exceeds ${readMaxBytes} bytes`);
}
