import type { BlobStore } from "../../../blob/blob-store.js";
import type { Logger } from "../../../log/logger.js";
import type { NodeRequest, NodeResponse } from "../../../transport/plane-handler.js";
import { assertMayDo, identifyCaller, type RegistryAccessOptions } from "../access/registry-access.js";
import { challenge } from "../access/registry-challenge.js";
import { resolveRepository } from "../content/repositories.js";
import { createBlobRoutes } from "./blob-routes.js";
import { createManifestRoutes } from "./manifest-routes.js";
import { OciError, ociErrorBody } from "./oci-error.js";
import { answer } from "./oci-response.js";
import type { OciRouteHandler, RepositoryAction } from "./oci-route.js";
import { createReferrerRoutes } from "./referrer-routes.js";
import { createTagRoutes } from "./tag-routes.js";
import { createUploadRoutes } from "./upload-routes.js";

interface Route {
  readonly pattern: RegExp;
  /** Names of the pattern's groups after the repository name. */
  readonly params: readonly string[];
  readonly methods: Readonly<Record<string, { readonly action: RepositoryAction; readonly handle: OciRouteHandler }>>;
}

export interface OciRouterOptions extends RegistryAccessOptions {
  readonly blobs: BlobStore;
  readonly logger: Logger;
}

/** The OCI distribution protocol under `/v2`: routing, naming, authorization, and the protocol's errors. */
export function createOciRouter(options: OciRouterOptions): (req: NodeRequest, res: NodeResponse) => Promise<void> {
  const { db, blobs, logger } = options;
  const blob = createBlobRoutes(db, blobs);
  const upload = createUploadRoutes(db, blobs, options.repositories);
  const manifest = createManifestRoutes(db);
  const tags = createTagRoutes(db);
  const referrers = createReferrerRoutes(db);
  const read = (handle: OciRouteHandler) => ({ action: "pull" as const, handle });
  const push = (handle: OciRouteHandler) => ({ action: "push" as const, handle });
  const remove = (handle: OciRouteHandler) => ({ action: "delete" as const, handle });
  // The name may hold slashes, so each pattern anchors on what follows it.
  const routes: Route[] = [
    { pattern: /^\/v2\/(.+)\/blobs\/uploads\/?$/, params: [], methods: { POST: push(upload.start) } },
    {
      pattern: /^\/v2\/(.+)\/blobs\/uploads\/([^/]+)$/,
      params: ["upload"],
      methods: {
        PATCH: push(upload.append),
        PUT: push(upload.finish),
        GET: push(upload.status),
        DELETE: push(upload.cancel),
      },
    },
    {
      pattern: /^\/v2\/(.+)\/blobs\/([^/]+)$/,
      params: ["digest"],
      methods: { GET: read(blob.read), HEAD: read(blob.read), DELETE: remove(blob.remove) },
    },
    {
      pattern: /^\/v2\/(.+)\/manifests\/([^/]+)$/,
      params: ["reference"],
      methods: {
        GET: read(manifest.read),
        HEAD: read(manifest.read),
        PUT: push(manifest.put),
        DELETE: remove(manifest.remove),
      },
    },
    { pattern: /^\/v2\/(.+)\/tags\/list$/, params: [], methods: { GET: read(tags.list) } },
    { pattern: /^\/v2\/(.+)\/referrers\/([^/]+)$/, params: ["digest"], methods: { GET: read(referrers.list) } },
  ];

  return async function serveOci(req, res) {
    const url = new URL(req.url ?? "/", "http://registry");
    const method = (req.method ?? "GET").toUpperCase();
    let scope: string | undefined;
    try {
      const caller = await identifyCaller(options, header(req, "authorization"));
      if (url.pathname === "/v2/" || url.pathname === "/v2") {
        if (method !== "GET" && method !== "HEAD") throw unsupportedMethod(["GET", "HEAD"]);
        if (caller.kind === "anonymous") throw new OciError("UNAUTHORIZED", "authentication required");
        return answer(res, 200, { "content-type": "application/json" }, {});
      }
      const route = routes.find((r) => r.pattern.test(url.pathname));
      if (!route) throw new OciError("NAME_INVALID", "no such route in the distribution protocol", undefined, 404);
      const match = route.pattern.exec(url.pathname)!;
      const entry = route.methods[method];
      if (!entry) throw unsupportedMethod(Object.keys(route.methods));
      const fullName = decode(match[1]!);
      scope = `repository:${fullName}:${entry.action === "pull" ? "pull" : entry.action === "push" ? "pull,push" : "delete"}`;
      const { target, facts } = await resolveRepository(db, fullName, options.repositories);
      assertMayDo(caller, facts, entry.action);
      const params = Object.fromEntries(route.params.map((name, i) => [name, decode(match[i + 2]!)]));
      await entry.handle({ req, res, target, caller, params, query: url.searchParams });
    } catch (error) {
      if (res.headersSent) {
        logger.warn("registry response cut short", { error, path: url.pathname });
        res.destroy();
        return;
      }
      if (!(error instanceof OciError)) {
        logger.error("registry request failed", { error, method, path: url.pathname });
        return answer(
          res,
          500,
          { "content-type": "application/json" },
          {
            errors: [{ code: "UNKNOWN", message: "internal error: the registry could not complete this request" }],
          },
        );
      }
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (error.code === "UNAUTHORIZED") headers["www-authenticate"] = challenge(req, scope);
      if (error.code === "UNSUPPORTED" && error.status === 405)
        headers.allow = String((error.detail as { allow?: string })?.allow ?? "");
      const range = (error.detail as { range?: string } | undefined)?.range;
      if (error.code === "RANGE_INVALID" && range) headers.range = range;
      answer(res, error.status, headers, method === "HEAD" ? undefined : ociErrorBody(error));
    }
  };
}

function unsupportedMethod(allowed: readonly string[]): OciError {
  return new OciError("UNSUPPORTED", "the method is not allowed on this route", { allow: allowed.join(", ") }, 405);
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === "string" ? value : undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new OciError("NAME_INVALID", "the path is not valid percent-encoding", undefined, 400);
  }
}
