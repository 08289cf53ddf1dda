import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { blobRow } from "../content/blob-content.js";
import { digestOfBytes, looksLikeDigest, parseDigest } from "../content/digest.js";
import { MAX_MANIFEST_BYTES, parseManifest, type ParsedManifest } from "../content/manifest-parser.js";
import { readManifest } from "../content/manifest-reads.js";
import { ensureRepository, existingRepository } from "../content/repositories.js";
import { immutableTagPattern } from "../content/tag-immutability.js";
import {
  registryManifestReferences,
  registryManifests,
  registryRepositories,
  registryRepositoryBlobs,
  registryTags,
} from "../registry-schema.js";
import { OciError } from "./oci-error.js";
import { answer, readBody } from "./oci-response.js";
import type { OciRouteHandler } from "./oci-route.js";

const tagPattern = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/;

/** A manifest reference from the path: a digest, or a tag that must follow the tag grammar. */
function parseReference(reference: string): { digest: string } | { tag: string } {
  if (looksLikeDigest(reference)) return { digest: parseDigest(reference, "reference").text };
  if (!tagPattern.test(reference)) {
    throw new OciError(
      "TAG_INVALID",
      `tag ${JSON.stringify(reference.slice(0, 140))} is invalid: [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}`,
    );
  }
  return { tag: reference };
}

/** GET, HEAD, PUT and DELETE of `/v2/<name>/manifests/<reference>`. */
export function createManifestRoutes(db: Database): Record<"read" | "put" | "remove", OciRouteHandler> {
  return {
    async read({ req, res, target, params }) {
      const reference = parseReference(params.reference!);
      const repositoryId = existingRepository(target);
      const manifest = await readManifest(db, repositoryId, reference, req.method === "GET");
      if (!manifest)
        throw new OciError("MANIFEST_UNKNOWN", `manifest ${params.reference} is not in ${target.fullName}`);
      const headers = {
        "content-type": manifest.mediaType,
        "docker-content-digest": manifest.digest,
        etag: `"${manifest.digest}"`,
        "content-length": manifest.content.length,
      };
      if (req.method === "HEAD") return answer(res, 200, headers);
      answer(res, 200, headers, manifest.content);
    },

    async put(request) {
      const { req, res, target, params } = request;
      const reference = parseReference(params.reference!);
      const bytes = await readBody(
        req,
        MAX_MANIFEST_BYTES,
        () =>
          new OciError("MANIFEST_INVALID", `the manifest is larger than ${MAX_MANIFEST_BYTES} bytes`, undefined, 413),
      );
      const contentType = typeof req.headers["content-type"] === "string" ? req.headers["content-type"] : undefined;
      const manifest = parseManifest(contentType, bytes);
      const algorithm = "digest" in reference ? parseDigest(reference.digest).algorithm : "sha256";
      const digest = digestOfBytes(algorithm, bytes);
      if ("digest" in reference && reference.digest !== digest) {
        throw new OciError("DIGEST_INVALID", `the manifest's digest is ${digest}, not ${reference.digest}`);
      }
      await db.transaction(async (tx) => {
        const repositoryId = await ensureRepository(tx, target);
        await checkReferences(tx, target.orgId, repositoryId, manifest);
        await tx
          .insert(registryManifests)
          .values({
            repositoryId,
            digest,
            mediaType: manifest.mediaType,
            artifactType: manifest.artifactType,
            subjectDigest: manifest.subject?.digest,
            annotations: manifest.annotations,
            content: bytes,
            totalSize: manifest.totalSize,
          })
          .onConflictDoUpdate({
            target: [registryManifests.repositoryId, registryManifests.digest],
            set: { pushedAt: sql`excluded.pushed_at` },
          });
        const references = [
          ...manifest.blobs.map((d) => ({ childDigest: d.digest, kind: "blob" as const })),
          ...manifest.manifests.map((d) => ({ childDigest: d.digest, kind: "manifest" as const })),
        ];
        if (references.length > 0) {
          await tx
            .insert(registryManifestReferences)
            .values(references.map((r) => ({ ...r, repositoryId, manifestDigest: digest })))
            .onConflictDoNothing();
        }
        if ("tag" in reference) await moveTag(tx, repositoryId, reference.tag, digest);
        await tx
          .update(registryRepositories)
          .set({ updatedAt: Date.now() })
          .where(eq(registryRepositories.id, repositoryId));
      });
      answer(res, 201, {
        location: `/v2/${target.fullName}/manifests/${digest}`,
        "docker-content-digest": digest,
        ...(manifest.subject && { "oci-subject": manifest.subject.digest }),
      });
    },

    /** By digest: the manifest and its tags. By tag: that tag only. Immutable tags stay. */
    async remove({ res, target, params }) {
      const reference = parseReference(params.reference!);
      const repositoryId = existingRepository(target);
      await db.transaction(async (tx) => {
        const patterns = await immutablePatterns(tx, repositoryId);
        if ("tag" in reference) {
          refuseImmutable(patterns, reference.tag, "deleted");
          const removed = await tx
            .delete(registryTags)
            .where(and(eq(registryTags.repositoryId, repositoryId), eq(registryTags.name, reference.tag)))
            .returning({ name: registryTags.name });
          if (removed.length === 0)
            throw new OciError("MANIFEST_UNKNOWN", `tag ${reference.tag} is not in ${target.fullName}`);
          return;
        }
        const tags = await tx
          .select({ name: registryTags.name })
          .from(registryTags)
          .where(and(eq(registryTags.repositoryId, repositoryId), eq(registryTags.manifestDigest, reference.digest)));
        for (const tag of tags) refuseImmutable(patterns, tag.name, "deleted");
        const removed = await tx
          .delete(registryManifests)
          .where(and(eq(registryManifests.repositoryId, repositoryId), eq(registryManifests.digest, reference.digest)))
          .returning({ digest: registryManifests.digest });
        if (removed.length === 0)
          throw new OciError("MANIFEST_UNKNOWN", `manifest ${reference.digest} is not in ${target.fullName}`);
        await tx
          .delete(registryTags)
          .where(and(eq(registryTags.repositoryId, repositoryId), eq(registryTags.manifestDigest, reference.digest)));
        await tx
          .delete(registryManifestReferences)
          .where(
            and(
              eq(registryManifestReferences.repositoryId, repositoryId),
              eq(registryManifestReferences.manifestDigest, reference.digest),
            ),
          );
      });
      answer(res, 202);
    },
  };
}

type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];

/**
 * Every blob the manifest needs must be in the organization (then it is linked to this repository),
 * and every manifest an index lists must be in this repository: MANIFEST_BLOB_UNKNOWN otherwise.
 */
async function checkReferences(tx: Tx, orgId: string, repositoryId: string, manifest: ParsedManifest): Promise<void> {
  for (const blob of manifest.blobs) {
    // Shared-locked until the push commits: garbage collection cannot remove it meanwhile.
    if (!(await blobRow(tx, orgId, blob.digest, "share"))) {
      throw new OciError(
        "MANIFEST_BLOB_UNKNOWN",
        `blob ${blob.digest} is not in the registry: push it before the manifest`,
        {
          digest: blob.digest,
        },
      );
    }
    await tx.insert(registryRepositoryBlobs).values({ repositoryId, digest: blob.digest }).onConflictDoNothing();
  }
  if (manifest.manifests.length === 0) return;
  const digests = [...new Set(manifest.manifests.map((m) => m.digest))];
  const found = await tx
    .select({ digest: registryManifests.digest })
    .from(registryManifests)
    .where(and(eq(registryManifests.repositoryId, repositoryId), inArray(registryManifests.digest, digests)));
  const missing = digests.find((d) => !found.some((f) => f.digest === d));
  if (missing) {
    throw new OciError(
      "MANIFEST_BLOB_UNKNOWN",
      `manifest ${missing} listed by the index is not in this repository: push it first`,
      {
        digest: missing,
      },
    );
  }
}

async function immutablePatterns(tx: Tx, repositoryId: string): Promise<string[]> {
  const [row] = await tx
    .select({ patterns: registryRepositories.immutableTagPatterns })
    .from(registryRepositories)
    .where(eq(registryRepositories.id, repositoryId));
  return row?.patterns ?? [];
}

function refuseImmutable(patterns: readonly string[], tag: string, what: "moved" | "deleted"): void {
  const pattern = immutableTagPattern(patterns, tag);
  if (pattern !== undefined) {
    throw new OciError("DENIED", `tag ${tag} is immutable (rule ${JSON.stringify(pattern)}): it cannot be ${what}`);
  }
}

/** Points the tag at `digest`; an immutable tag may be pushed again only with the same manifest. */
async function moveTag(tx: Tx, repositoryId: string, tag: string, digest: string): Promise<void> {
  const [current] = await tx
    .select({ digest: registryTags.manifestDigest })
    .from(registryTags)
    .where(and(eq(registryTags.repositoryId, repositoryId), eq(registryTags.name, tag)))
    .for("update");
  if (current?.digest === digest) return;
  if (current) refuseImmutable(await immutablePatterns(tx, repositoryId), tag, "moved");
  await tx
    .insert(registryTags)
    .values({ repositoryId, name: tag, manifestDigest: digest })
    .onConflictDoUpdate({
      target: [registryTags.repositoryId, registryTags.name],
      set: { manifestDigest: digest, pushedAt: sql`excluded.pushed_at`, pulledAt: null },
    });
}
