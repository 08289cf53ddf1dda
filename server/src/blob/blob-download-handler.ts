import type { NodeRequest, NodeRequestHandler, NodeResponse } from "../transport/plane-handler.js";
import { blobKeyFromUrlPath } from "./blob-key.js";
import type { BlobStore, OpenBlob } from "./blob-store.js";
import { BLOB_ROUTE_PREFIX, type BlobLinkCheck, type BlobUrlSigner } from "./blob-url-signer.js";
import { parseByteRange } from "./byte-range.js";
import { attachmentDisposition } from "./content-disposition.js";

export interface BlobDownloadOptions {
  readonly store: BlobStore;
  readonly signer: BlobUrlSigner;
  /** What answers every request outside the download route: the service router. */
  readonly next: NodeRequestHandler;
  readonly now?: () => number;
  /** Told about a failure that ended in a 500 or a cut response. */
  readonly onError?: (error: unknown) => void;
}

const REFUSALS: Record<Extract<BlobLinkCheck, { ok: false }>["reason"], string> = {
  unsigned: "this download link is not signed",
  invalid: "this download link is not valid: it was changed, or signed by another server",
  expired: "this download link has expired: ask for a new one",
};

/**
 * Serves pre-signed downloads (`/v1/blobs/<key>?expires=…&signature=…`) in front of the service
 * router, as plain HTTP: the link is the credential, so these requests never reach the RPC
 * interceptors. GET and HEAD, single byte ranges, ETag and If-None-Match / If-Range on the
 * content's SHA-256, and a download (attachment, nosniff, sandboxed) rather than a page, since
 * the content is whatever a script wrote and is served from the API's own origin.
 */
export function createBlobDownloadHandler(options: BlobDownloadOptions): NodeRequestHandler {
  const now = options.now ?? Date.now;

  async function serve(request: NodeRequest, response: NodeResponse, pathname: string, search: string): Promise<void> {
    const method = request.method ?? "GET";
    if (method !== "GET" && method !== "HEAD") {
      response.setHeader("allow", "GET, HEAD");
      return plain(response, 405, `${method} is not allowed on a download link; allowed: GET, HEAD`);
    }
    const query = new URLSearchParams(search);
    const key = blobKeyFromUrlPath(pathname.slice(BLOB_ROUTE_PREFIX.length));
    const link: BlobLinkCheck =
      key === undefined
        ? { ok: false, reason: query.has("signature") ? "invalid" : "unsigned" }
        : options.signer.verify(key, query);
    if (!link.ok) return plain(response, 403, REFUSALS[link.reason]);
    const blob = await options.store.open(key!);
    if (!blob) return plain(response, 404, "the file of this download link no longer exists");
    try {
      await send(request, response, blob, link, method === "HEAD");
    } finally {
      await blob.close();
    }
  }

  async function send(
    request: NodeRequest,
    response: NodeResponse,
    blob: OpenBlob,
    link: Extract<BlobLinkCheck, { ok: true }>,
    headOnly: boolean,
  ): Promise<void> {
    const etag = `"${blob.sha256}"`;
    response.setHeader("etag", etag);
    response.setHeader("last-modified", new Date(blob.updatedAt).toUTCString());
    // The link stops working at its expiry; no cache should serve it longer, and no shared one at all.
    response.setHeader("cache-control", `private, max-age=${Math.max(0, Math.floor((link.expiresAt - now()) / 1000))}`);
    if (matchesAny(header(request, "if-none-match"), etag)) {
      response.statusCode = 304;
      response.end();
      return;
    }
    response.setHeader("content-type", link.contentType || blob.contentType);
    response.setHeader(
      "content-disposition",
      attachmentDisposition(link.fileName || blob.key.slice(blob.key.lastIndexOf("/") + 1)),
    );
    response.setHeader("x-content-type-options", "nosniff");
    response.setHeader("content-security-policy", "default-src 'none'; sandbox");
    response.setHeader("accept-ranges", "bytes");

    // If-Range: the range holds only for the version the client already has part of.
    const ifRange = header(request, "if-range");
    const range =
      ifRange === undefined || ifRange === etag
        ? parseByteRange(header(request, "range"), blob.size)
        : ({ kind: "whole" } as const);
    if (range.kind === "unsatisfiable") {
      response.setHeader("content-range", `bytes */${blob.size}`);
      return plain(response, 416, `the range is outside the file's ${blob.size} bytes`);
    }
    if (range.kind === "range") {
      response.statusCode = 206;
      response.setHeader("content-range", `bytes ${range.start}-${range.end}/${blob.size}`);
      response.setHeader("content-length", String(range.end - range.start + 1));
    } else {
      response.statusCode = 200;
      response.setHeader("content-length", String(blob.size));
    }
    if (headOnly) {
      response.end();
      return;
    }
    await blob.sendTo(response, range.kind === "range" ? range : undefined);
  }

  return (request, response) => {
    const target = request.url ?? "/";
    const queryAt = target.indexOf("?");
    const pathname = queryAt === -1 ? target : target.slice(0, queryAt);
    if (!pathname.startsWith(BLOB_ROUTE_PREFIX)) return options.next(request, response);
    serve(request, response, pathname, queryAt === -1 ? "" : target.slice(queryAt + 1)).catch((error: unknown) => {
      // A client that goes away mid-download is not a failure of ours.
      if ((error as NodeJS.ErrnoException).code === "ERR_STREAM_PREMATURE_CLOSE") return;
      options.onError?.(error);
      if (!response.headersSent) plain(response, 500, "internal error");
      else response.destroy();
    });
  };
}

/** A short plain-text answer; never cached, since a refusal or a miss may not last. */
function plain(response: NodeResponse, status: number, message: string): void {
  const body = `${message}\n`;
  response.statusCode = status;
  response.setHeader("content-type", "text/plain; charset=utf-8");
  response.setHeader("content-length", String(Buffer.byteLength(body)));
  response.setHeader("cache-control", "no-store");
  response.end(body);
}

function header(request: NodeRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** If-None-Match: a list of entity tags (weak ones compared weakly, RFC 9110 §13.1.2) or `*`. */
function matchesAny(list: string | undefined, etag: string): boolean {
  if (list === undefined) return false;
  return list.split(",").some((candidate) => {
    const tag = candidate.trim();
    return tag === "*" || tag.replace(/^W\//, "") === etag;
  });
}
