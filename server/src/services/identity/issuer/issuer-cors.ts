import type { BlockList } from "node:net";
import { clientAddressOf } from "../../../net/client-address.js";
import type { NodeRequest, NodeHandlerFn, NodeResponse } from "@platform/codegen/runtime/server";
import { CLIENT_IP_HEADER, resolveIssuerPool, type IssuerDeps } from "./issuer-context.js";

/** What the specification gives allowed browser calls to the issuer. */
export const ISSUER_CORS_HEADERS = {
  "access-control-allow-methods": "GET,POST,PUT,DELETE,OPTIONS",
  "access-control-allow-headers": "authorization,content-type",
} as const;
export const ISSUER_PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The identity listener's front: records the client's address for the rate limits (the socket's
 * peer, or what a trusted proxy says it received from; a value the client sent is overwritten, see
 * net/client-address.ts), and applies each pool's CORS policy. An origin
 * is allowed only when listed exactly in the pool's `policies.cors_allowed_origins`; there is no
 * wildcard and never `Access-Control-Allow-Credentials`, since the issuer takes bearer tokens only.
 * Preflights are answered here (204 allowed, 403 not); an actual request from another origin is
 * served without CORS headers, so the browser keeps the answer from the page.
 */
export function createIssuerFront(
  deps: IssuerDeps,
  next: NodeHandlerFn,
  options: { readonly trustedProxies?: BlockList | undefined; readonly onError: (error: unknown) => void },
): NodeHandlerFn {
  const { onError } = options;
  return (request, response) => {
    request.headers[CLIENT_IP_HEADER] = clientAddressOf(
      request.socket.remoteAddress,
      request.headers["x-forwarded-for"],
      options.trustedProxies,
    );
    const origin = single(request.headers.origin);
    if (origin === undefined) return next(request, response);
    allowedOrigin(deps, request, origin).then(
      (allowed) => {
        const preflight =
          request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined;
        if (allowed) {
          response.setHeader("access-control-allow-origin", origin);
          response.setHeader("vary", "origin");
          for (const [name, value] of Object.entries(ISSUER_CORS_HEADERS)) response.setHeader(name, value);
          response.setHeader("access-control-expose-headers", "retry-after,www-authenticate,x-request-id");
        }
        if (!preflight) return next(request, response);
        if (allowed) response.setHeader("access-control-max-age", String(ISSUER_PREFLIGHT_MAX_AGE_SECONDS));
        end(response, allowed ? 204 : 403);
      },
      (error: unknown) => {
        onError(error);
        end(response, 500);
      },
    );
  };
}

async function allowedOrigin(deps: IssuerDeps, request: NodeRequest, origin: string): Promise<boolean> {
  const [org, pool] = (request.url ?? "/").split("?", 1)[0]!.split("/").slice(1, 3).map(safeDecode);
  if (!org || !pool) return false;
  const found = await resolveIssuerPool(deps, org, pool);
  const listed = found?.record.policies.cors_allowed_origins;
  return Array.isArray(listed) && listed.includes(origin);
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function end(response: NodeResponse, status: number): void {
  response.statusCode = status;
  response.setHeader("content-length", "0");
  response.end();
}
