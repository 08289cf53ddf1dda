import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import type { NodeRequest, NodeHandlerFn, NodeResponse } from "@platform/codegen/runtime/server";
import type { OpenApiDocument } from "./openapi-document.js";
import { referencePageHtml } from "./reference-page.js";
import type { RendererAsset } from "./renderer-assets.js";

const gzip = promisify(gzipCallback);

/** Where a listener serves its document and its reference page; the page's files are under `/docs/`. */
export const DOCUMENT_PATH = "/openapi.json";
export const REFERENCE_PATH = "/docs";

/**
 * What the reference page may do: run our scripts and the renderer's, apply its styles (it sets
 * style attributes, hence 'unsafe-inline' for styles only), show its data: icons, and fetch the
 * document and the calls a reader tries out from this origin, or from the document's server when
 * it names another (`--public-api-url`). Nothing else, and no framing.
 */
export function referencePageCsp(document: OpenApiDocument): string {
  const servers = new Set<string>();
  for (const server of document.servers ?? []) {
    try {
      const url = new URL(server.url);
      if ((url.protocol === "http:" || url.protocol === "https:") && !url.host.includes("{")) servers.add(url.origin);
    } catch {
      // A relative URL (this origin), or one whose variables the reader fills in.
    }
  }
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    ["connect-src 'self'", ...servers].join(" "),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export interface DocsOptions {
  /** The listener's document, as assembled at start. */
  readonly document: OpenApiDocument;
  /** The page's title. */
  readonly title: string;
  /** The renderer's files, prepared once per process and shared by every listener. */
  readonly assets: PreparedAssets;
}

/** The page's files, by name under `/docs/`, ready to serve. */
export type PreparedAssets = ReadonlyMap<string, Prepared>;

/** Compresses and tags the renderer's files, once for every listener of the process. */
export async function prepareAssets(assets: readonly RendererAsset[]): Promise<PreparedAssets> {
  return new Map(
    await Promise.all(
      assets.map(async (asset) => [asset.name, await prepare(asset.contentType, asset.body, COMMON_HEADERS)] as const),
    ),
  );
}

const COMMON_HEADERS = { "x-content-type-options": "nosniff" };

/** One prepared answer: its bytes (plain and gzipped) and their validators, computed once. */
export interface Prepared {
  readonly contentType: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly plain: { body: Buffer; etag: string };
  readonly gzipped: { body: Buffer; etag: string };
}

/**
 * The API reference of one listener, served ahead of its other routes: `GET /openapi.json` (the
 * document) and `GET /docs` (the page, with its files under `/docs/`), with no credential. Every
 * answer is prepared here, once; requests only choose an encoding and compare validators.
 * Answers are `no-cache` with a strong ETag: clients revalidate, so an upgraded server's document
 * is seen at once, and an unchanged one costs a 304. Paths outside these go to `next`.
 */
export async function createDocsMiddleware(options: DocsOptions): Promise<(next: NodeHandlerFn) => NodeHandlerFn> {
  const page = referencePageHtml({ title: options.title, assetBase: "docs/", documentUrl: "openapi.json" });
  const [document, html] = await Promise.all([
    prepare("application/json", Buffer.from(JSON.stringify(options.document)), COMMON_HEADERS),
    prepare("text/html; charset=utf-8", Buffer.from(page), {
      ...COMMON_HEADERS,
      "content-security-policy": referencePageCsp(options.document),
      "referrer-policy": "no-referrer",
    }),
  ]);
  const routes = new Map<string, Prepared>([
    [DOCUMENT_PATH, document],
    [REFERENCE_PATH, html],
    ...[...options.assets].map(([name, asset]): [string, Prepared] => [`${REFERENCE_PATH}/${name}`, asset]),
  ]);

  return (next) => (request, response) => {
    const path = (request.url ?? "/").split("?", 1)[0]!;
    const prepared = routes.get(path);
    if (!prepared) {
      // `/docs/` is how many readers type it; the page's relative links want `/docs`.
      if (path === `${REFERENCE_PATH}/` && (request.method === "GET" || request.method === "HEAD"))
        return redirect(response, "../docs");
      return next(request, response);
    }
    serve(request, response, prepared);
  };
}

function serve(request: NodeRequest, response: NodeResponse, prepared: Prepared): void {
  const method = request.method ?? "GET";
  if (method !== "GET" && method !== "HEAD") {
    const body = JSON.stringify({
      code: "unimplemented",
      message: `${method} is not allowed on ${(request.url ?? "").split("?", 1)[0]}; allowed: GET, HEAD`,
    });
    response.statusCode = 405;
    response.setHeader("allow", "GET, HEAD");
    response.setHeader("content-type", "application/json");
    response.setHeader("content-length", String(Buffer.byteLength(body)));
    response.end(body);
    return;
  }
  const representation = acceptsGzip(header(request, "accept-encoding")) ? prepared.gzipped : prepared.plain;
  for (const [name, value] of Object.entries(prepared.headers)) response.setHeader(name, value);
  response.setHeader("cache-control", "no-cache");
  response.setHeader("vary", "accept-encoding");
  response.setHeader("etag", representation.etag);
  if (matchesAny(header(request, "if-none-match"), representation.etag)) {
    response.statusCode = 304;
    response.end();
    return;
  }
  response.statusCode = 200;
  response.setHeader("content-type", prepared.contentType);
  if (representation === prepared.gzipped) response.setHeader("content-encoding", "gzip");
  response.setHeader("content-length", String(representation.body.length));
  if (method === "HEAD") response.end();
  else response.end(representation.body);
}

function redirect(response: NodeResponse, location: string): void {
  response.statusCode = 301;
  response.setHeader("location", location);
  response.setHeader("content-length", "0");
  response.end();
}

async function prepare(contentType: string, body: Buffer, headers: Record<string, string>): Promise<Prepared> {
  const tag = createHash("sha256").update(body).digest("base64url").slice(0, 32);
  // Each encoding is its own representation, so each has its own strong validator.
  return {
    contentType,
    headers,
    plain: { body, etag: `"${tag}"` },
    gzipped: { body: await gzip(body), etag: `"${tag}-gzip"` },
  };
}

/** Whether `Accept-Encoding` names gzip (and does not refuse it with `q=0`). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(",").some((item) => {
    const [coding, ...params] = item.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "x-gzip") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

function matchesAny(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}

function header(request: NodeRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
