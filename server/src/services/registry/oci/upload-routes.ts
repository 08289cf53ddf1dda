import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import type { BlobStore } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import { assertMayDo } from "../access/registry-access.js";
import {
  appendPart,
  completeUpload,
  findUpload,
  mountBlob,
  uploadPrefix,
  type UploadState,
} from "../content/blob-content.js";
import { parseDigest } from "../content/digest.js";
import { ensureRepository, existingRepository, resolveRepository } from "../content/repositories.js";
import type { RepositoryCache } from "../content/repository-cache.js";
import { registryUploads } from "../registry-schema.js";
import { OciError } from "./oci-error.js";
import { answer, bodyChunks } from "./oci-response.js";
import type { OciRequest, OciRouteHandler } from "./oci-route.js";

type UploadRoute = "start" | "append" | "finish" | "status" | "cancel";

/** The upload routes: `/v2/<name>/blobs/uploads/` and `/v2/<name>/blobs/uploads/<id>`. */
export function createUploadRoutes(
  db: Database,
  blobs: BlobStore,
  repositories: RepositoryCache,
): Record<UploadRoute, OciRouteHandler> {
  const location = (request: OciRequest, id: string) => `/v2/${request.target.fullName}/blobs/uploads/${id}`;
  const progress = (request: OciRequest, upload: UploadState) => ({
    location: location(request, upload.id),
    range: `0-${Math.max(upload.size - 1, 0)}`,
    "docker-upload-uuid": upload.id,
  });

  async function finish(request: OciRequest, upload: UploadState, digestText: string | null): Promise<void> {
    if (!digestText) throw new OciError("DIGEST_INVALID", "the digest query parameter is required to finish an upload");
    const digest = parseDigest(digestText);
    await completeUpload(db, blobs, request.target.orgId, upload, digest);
    answer(request.res, 201, {
      location: `/v2/${request.target.fullName}/blobs/${digest.text}`,
      "docker-content-digest": digest.text,
    });
  }

  /** Whether the request carries a body (a final chunk, a monolithic upload). */
  const hasBody = (request: OciRequest) =>
    Number(request.req.headers["content-length"] ?? 0) > 0 || request.req.headers["transfer-encoding"] !== undefined;

  return {
    async start(request) {
      const { target, query, caller } = request;
      const mount = query.get("mount");
      if (mount) {
        const digest = parseDigest(mount, "mount").text;
        const from = query.get("from");
        // Only from a repository the caller may read, which serves the blob: a mount never
        // reveals a blob the caller cannot read. Anything else is an ordinary upload.
        const source = from ? await resolveRepository(db, from, repositories).catch(() => undefined) : undefined;
        const readable = source
          ? source.target.repositoryId !== undefined && tryAccess(() => assertMayDo(caller, source.facts, "pull"))
          : !from;
        if (readable) {
          const repositoryId = await ensureRepository(db, target);
          const mountSource = source && { orgId: source.target.orgId, repositoryId: source.target.repositoryId! };
          if (await mountBlob(db, target.orgId, repositoryId, digest, mountSource)) {
            return answer(request.res, 201, {
              location: `/v2/${target.fullName}/blobs/${digest}`,
              "docker-content-digest": digest,
            });
          }
        }
      }
      const repositoryId = await ensureRepository(db, target);
      const [created] = await db.insert(registryUploads).values({ id: randomUUID(), repositoryId }).returning();
      let upload: UploadState = created!;
      const digest = query.get("digest");
      if (digest !== null) {
        // A monolithic upload: the body is the whole blob.
        parseDigest(digest);
        upload = await appendPart(db, blobs, upload, bodyChunks(request.req));
        return finish(request, upload, digest);
      }
      answer(request.res, 202, progress(request, upload));
    },

    async append(request) {
      const upload = await findUpload(db, existingRepository(request.target), request.params.upload!);
      checkContentRange(request, upload);
      const next = await appendPart(db, blobs, upload, bodyChunks(request.req));
      answer(request.res, 202, progress(request, next));
    },

    async finish(request) {
      let upload = await findUpload(db, existingRepository(request.target), request.params.upload!);
      const digest = request.query.get("digest");
      if (digest) parseDigest(digest);
      if (hasBody(request)) {
        checkContentRange(request, upload);
        upload = await appendPart(db, blobs, upload, bodyChunks(request.req));
      }
      await finish(request, upload, digest);
    },

    async status(request) {
      const upload = await findUpload(db, existingRepository(request.target), request.params.upload!);
      answer(request.res, 204, progress(request, upload));
    },

    async cancel(request) {
      const upload = await findUpload(db, existingRepository(request.target), request.params.upload!);
      await db.delete(registryUploads).where(eq(registryUploads.id, upload.id));
      await blobs.deletePrefix(uploadPrefix(upload.id));
      answer(request.res, 204);
    },
  };
}

function tryAccess(check: () => void): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/**
 * A chunk must continue the upload where it stands: `Content-Range: <start>-<end>` with start at
 * the upload's size. Anything else is 416 with the upload's Range, and the upload stays resumable.
 */
function checkContentRange(request: OciRequest, upload: UploadState): void {
  const header = request.req.headers["content-range"];
  if (typeof header !== "string") return;
  const match = /^(?:bytes[ =])?(\d+)-(\d+)(?:\/(?:\d+|\*))?$/.exec(header.trim());
  const length = request.req.headers["content-length"];
  const fits =
    match &&
    Number(match[1]) === upload.size &&
    Number(match[2]) >= Number(match[1]) &&
    (length === undefined || Number(length) === Number(match[2]) - Number(match[1]) + 1);
  if (!fits) {
    throw new OciError(
      "RANGE_INVALID",
      `Content-Range ${JSON.stringify(header.slice(0, 60))} does not continue the upload, which holds ${upload.size} bytes: the next chunk starts at ${upload.size}`,
      { range: `0-${Math.max(upload.size - 1, 0)}` },
    );
  }
}
