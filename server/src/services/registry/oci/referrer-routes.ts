import { and, asc, eq } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { parseDigest } from "../content/digest.js";
import { OCI_INDEX } from "../content/manifest-parser.js";
import { registryManifests } from "../registry-schema.js";
import { answer } from "./oci-response.js";
import type { OciRouteHandler } from "./oci-route.js";

/**
 * `GET /v2/<name>/referrers/<digest>`: an image index of the manifests whose subject is the digest,
 * filtered by `artifactType` when asked (and then said so in `OCI-Filters-Applied`). A digest with
 * no referrers, or a repository not pushed yet, answers an empty index, never 404.
 */
export function createReferrerRoutes(db: Database): Record<"list", OciRouteHandler> {
  return {
    async list({ res, target, params, query }) {
      const subject = parseDigest(params.digest!).text;
      const artifactType = query.get("artifactType");
      const rows = target.repositoryId
        ? await db
            .select({
              mediaType: registryManifests.mediaType,
              digest: registryManifests.digest,
              content: registryManifests.content,
              artifactType: registryManifests.artifactType,
              annotations: registryManifests.annotations,
            })
            .from(registryManifests)
            .where(
              and(
                eq(registryManifests.repositoryId, target.repositoryId),
                eq(registryManifests.subjectDigest, subject),
                artifactType ? eq(registryManifests.artifactType, artifactType) : undefined,
              ),
            )
            .orderBy(asc(registryManifests.pushedAt), asc(registryManifests.digest))
        : [];
      const manifests = rows.map((r) => ({
        mediaType: r.mediaType,
        digest: r.digest,
        size: r.content.length,
        ...(r.artifactType && { artifactType: r.artifactType }),
        ...(r.annotations && { annotations: r.annotations }),
      }));
      const headers: Record<string, string> = { "content-type": OCI_INDEX };
      if (artifactType) headers["oci-filters-applied"] = "artifactType";
      answer(res, 200, headers, { schemaVersion: 2, mediaType: OCI_INDEX, manifests });
    },
  };
}
