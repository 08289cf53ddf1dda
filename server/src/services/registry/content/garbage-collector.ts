import { and, eq, exists, inArray, lt, notExists, sql } from "drizzle-orm";
import { startPollLoop, type PollLoop } from "../../../background/poll-loop.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import type { Logger } from "../../../log/logger.js";
import {
  registryBlobs,
  registryManifestReferences,
  registryRepositories,
  registryRepositoryBlobs,
  registryUploads,
} from "../registry-schema.js";
import { uploadPrefix } from "./blob-content.js";

export interface GarbageCollectionOptions {
  /** A blob no manifest references is kept this long after it was pushed or last linked: a push in flight uploads its layers before its manifest. */
  readonly graceMs: number;
  /** An upload with no chunk for this long is abandoned. */
  readonly uploadExpiryMs: number;
  readonly now?: () => number;
  /** Blobs examined in one pass, so one pass stays short. */
  readonly batch?: number;
}

export const DEFAULT_GC_GRACE_MS = 60 * 60_000;
export const DEFAULT_UPLOAD_EXPIRY_MS = 24 * 60 * 60_000;
export const DEFAULT_GC_INTERVAL_MS = 10 * 60_000;

/** A blob is in use while a manifest of its organization references it. */
const referenced = (db: Pick<Database, "select">) =>
  db
    .select({ one: sql`1` })
    .from(registryManifestReferences)
    .innerJoin(registryRepositories, eq(registryRepositories.id, registryManifestReferences.repositoryId))
    .where(
      and(
        eq(registryRepositories.orgId, registryBlobs.orgId),
        eq(registryManifestReferences.childDigest, registryBlobs.digest),
      ),
    );

/**
 * One pass of garbage collection: abandoned uploads and their parts, then blobs that no manifest
 * of their organization references and that nothing pushed or linked within the grace period.
 * Each blob goes in its own transaction that locks its row first: a manifest push holds a share
 * lock on every blob row it references until it commits, so a blob is either seen referenced or
 * deleted before the push checks it (and the push then fails with MANIFEST_BLOB_UNKNOWN).
 * Answers how many uploads and blobs were removed.
 */
export async function collectGarbage(
  db: Database,
  blobs: BlobStore,
  options: GarbageCollectionOptions,
): Promise<{ uploads: number; blobs: number }> {
  const now = (options.now ?? Date.now)();
  const expired = await db
    .delete(registryUploads)
    .where(lt(registryUploads.updatedAt, now - options.uploadExpiryMs))
    .returning({ id: registryUploads.id });
  for (const upload of expired) await blobs.deletePrefix(uploadPrefix(upload.id));

  const cutoff = now - options.graceMs;
  const candidates = await db
    .select({ orgId: registryBlobs.orgId, digest: registryBlobs.digest })
    .from(registryBlobs)
    .where(
      and(
        lt(registryBlobs.createdAt, cutoff),
        notExists(referenced(db)),
        notExists(
          db
            .select({ one: sql`1` })
            .from(registryRepositoryBlobs)
            .innerJoin(registryRepositories, eq(registryRepositories.id, registryRepositoryBlobs.repositoryId))
            .where(
              and(
                eq(registryRepositories.orgId, registryBlobs.orgId),
                eq(registryRepositoryBlobs.digest, registryBlobs.digest),
                sql`${registryRepositoryBlobs.createdAt} >= ${cutoff}`,
              ),
            ),
        ),
      ),
    )
    .limit(options.batch ?? 500);

  let removed = 0;
  for (const candidate of candidates) {
    const storageKey = await db.transaction(async (tx) => {
      const where = and(eq(registryBlobs.orgId, candidate.orgId), eq(registryBlobs.digest, candidate.digest));
      const [row] = await tx
        .select({ storageKey: registryBlobs.storageKey })
        .from(registryBlobs)
        .where(where)
        .for("update");
      // Read again after the lock, in a statement that sees what committed while it waited.
      const [stillReferenced] = await tx
        .select({ one: sql`1` })
        .from(registryBlobs)
        .where(and(where, exists(referenced(tx))));
      if (!row || stillReferenced) return undefined;
      const repositories = tx
        .select({ id: registryRepositories.id })
        .from(registryRepositories)
        .where(eq(registryRepositories.orgId, candidate.orgId));
      await tx
        .delete(registryRepositoryBlobs)
        .where(
          and(
            eq(registryRepositoryBlobs.digest, candidate.digest),
            inArray(registryRepositoryBlobs.repositoryId, repositories),
          ),
        );
      await tx.delete(registryBlobs).where(where);
      return row.storageKey;
    });
    if (storageKey === undefined) continue;
    removed++;
    // The same bytes may have been pushed again meanwhile, under the same key: then they stay.
    const [reused] = await db
      .select({ one: sql`1` })
      .from(registryBlobs)
      .where(eq(registryBlobs.storageKey, storageKey));
    if (!reused) await blobs.delete(storageKey);
  }
  return { uploads: expired.length, blobs: removed };
}

/** Runs garbage collection now and then, in every process (each blob's removal is its own transaction). */
export function startGarbageCollector(
  db: Database,
  blobs: BlobStore,
  logger: Logger,
  options: GarbageCollectionOptions & { readonly intervalMs: number },
): PollLoop {
  return startPollLoop(
    async () => {
      const result = await collectGarbage(db, blobs, options);
      if (result.uploads + result.blobs > 0) logger.info("registry garbage collected", result);
      return false;
    },
    { pollMs: options.intervalMs, onError: (error) => logger.error("registry garbage collection failed", { error }) },
  );
}
