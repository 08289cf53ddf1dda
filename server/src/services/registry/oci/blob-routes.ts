import { and, eq } from "drizzle-orm";
import { parseByteRange } from "../../../blob/byte-range.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import { openLinkedBlob } from "../content/blob-content.js";
import { parseDigest } from "../content/digest.js";
import { existingRepository } from "../content/repositories.js";
import { registryRepositoryBlobs } from "../registry-schema.js";
import { OciError } from "./oci-error.js";
import { answer } from "./oci-response.js";
import type { OciRouteHandler } from "./oci-route.js";

/** GET, HEAD and DELETE of `/v2/<name>/blobs/<digest>`. */
export function createBlobRoutes(db: Database, blobs: BlobStore): Record<"read" | "remove", OciRouteHandler> {
  return {
    async read({ req, res, target, params }) {
      const digest = parseDigest(params.digest!).text;
      const repositoryId = existingRepository(target);
      const blob = await openLinkedBlob(db, blobs, target.orgId, repositoryId, digest);
      if (!blob) throw new OciError("BLOB_UNKNOWN", `blob ${digest} is not in ${target.fullName}`, { digest });
      const headers = {
        "content-type": "application/octet-stream",
        "docker-content-digest": digest,
        "accept-ranges": "bytes",
        etag: `"${digest}"`,
        "cache-control": "max-age=31536000",
      };
      const range = parseByteRange(typeof req.headers.range === "string" ? req.headers.range : undefined, blob.size);
      if (req.method === "HEAD" || range.kind === "unsatisfiable") {
        await blob.close();
        if (range.kind === "unsatisfiable" && req.method !== "HEAD") {
          return answer(res, 416, { "content-range": `bytes */${blob.size}` });
        }
        return answer(res, 200, { ...headers, "content-length": blob.size });
      }
      if (range.kind === "range") {
        res.writeHead(206, {
          ...headers,
          "content-length": range.end - range.start + 1,
          "content-range": `bytes ${range.start}-${range.end}/${blob.size}`,
        });
      } else {
        res.writeHead(200, { ...headers, "content-length": blob.size });
      }
      await blob.sendTo(res, range.kind === "range" ? range : undefined);
    },

    /** Unlinks the blob from the repository; the bytes go when garbage collection finds them unused. */
    async remove({ res, target, params }) {
      const digest = parseDigest(params.digest!).text;
      const repositoryId = existingRepository(target);
      const removed = await db
        .delete(registryRepositoryBlobs)
        .where(and(eq(registryRepositoryBlobs.repositoryId, repositoryId), eq(registryRepositoryBlobs.digest, digest)))
        .returning({ digest: registryRepositoryBlobs.digest });
      if (removed.length === 0)
        throw new OciError("BLOB_UNKNOWN", `blob ${digest} is not in ${target.fullName}`, { digest });
      answer(res, 202, { "docker-content-digest": digest });
    },
  };
}
