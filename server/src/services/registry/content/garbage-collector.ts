import { and, eq, lt, sql } from "drizzle-orm";
import { startPollLoop, type PollLoop } from "../../../background/poll-loop.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { resultRows, type Database } from "../../../db/database.js";
import {
  registryBlobs,
  registryManifestReferences,
  registryRepositories,
  registryRepositoryBlobs,
  registryUploads,
} from "../registry-schema.js";
import { uploadPrefix } from "./blob-content.js";

/** A blob or link younger than this is kept: its manifest may still be on its way. */
export const DEFAULT_GC_GRACE_MS = 24 * 60 * 60 * 1000;
/** An upload untouched for this long is abandoned. */
export const DEFAULT_UPLOAD_EXPIRY_MS = 7 * 24 * 60 * 60 * 1000;
/** How often the sweep runs. */
export const GC_INTERVAL_MS = 60 * 60 * 1000;
/** Rows one pass examines of each kind; the pass says more is waiting when it hit the limit. */
const BATCH = 500;

export interface GarbageCollectorOptions {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly graceMs?: number;
  readonly uploadExpiryMs?: number;
  readonly now?: () => number;
}

export interface CollectedGarbage {
  readonly links: number;
  readonly blobs: number;
  readonly uploads: number;
  /** Objects under `registry/` that no row named. */
  readonly orphans: number;
}

/** Folders whose every object a blob row or an upload's part names. */
const SWEPT_FOLDERS = ["registry/blobs/", "registry/uploads/"];

/**
 * One pass: repository links older than the grace that no manifest of the repository references
 * (an upload or mount never used by a manifest), then blobs of an organization with no link and no
 * manifest reference left, then uploads idle past their expiry with their part objects, then
 * objects older than the grace that no row names (left by a crash between an object's write and
 * its row).
 */
export async function collectGarbage(options: GarbageCollectorOptions): Promise<CollectedGarbage> {
  const { db } = options;
  const now = (options.now ?? Date.now)();
  const cutoff = now - (options.graceMs ?? DEFAULT_GC_GRACE_MS);
  const links = await unlinkUnreferenced(db, cutoff);
  const blobs = await deleteUnusedBlobs(options, cutoff);
  const uploads = await deleteExpiredUploads(options, now - (options.uploadExpiryMs ?? DEFAULT_UPLOAD_EXPIRY_MS));
  const orphans = await deleteOrphanObjects(options, cutoff);
  return { links, blobs, uploads, orphans };
}

async function unlinkUnreferenced(db: Database, cutoff: number): Promise<number> {
  const removed = await db
    .delete(registryRepositoryBlobs)
    .where(
      and(
        lt(registryRepositoryBlobs.createdAt, cutoff),
        sql`not exists (select 1 from ${registryManifestReferences} r
          where r.repository_id = ${registryRepositoryBlobs.repositoryId}
            and r.child_digest = ${registryRepositoryBlobs.digest})`,
      ),
    )
    .returning({ digest: registryRepositoryBlobs.digest });
  return removed.length;
}

/** Whether a repository of the organization links or references the digest (read after the row lock). */
async function inUse(tx: Pick<Database, "execute">, orgId: string, digest: string): Promise<boolean> {
  const result = await tx.execute(sql`select 1 as used from ${registryRepositories} repo
    where repo.org_id = ${orgId} and (
      exists (select 1 from ${registryRepositoryBlobs} l where l.repository_id = repo.id and l.digest = ${digest})
      or exists (select 1 from ${registryManifestReferences} r
        where r.repository_id = repo.id and r.child_digest = ${digest}))
    limit 1`);
  return resultRows(result).length > 0;
}

/**
 * Each candidate blob is deleted in its own transaction: its row is locked first, then links and
 * references are read again. A manifest push locks the blob row (shared) before linking it, so
 * either the push committed its link before the re-check (the blob stays) or it waits for this
 * delete and then finds no blob (MANIFEST_BLOB_UNKNOWN): never a manifest naming a deleted blob.
 * The object goes only after the row's delete committed, and only when no other organization's
 * row names it (a mount from a public repository shares the object).
 */
async function deleteUnusedBlobs(options: GarbageCollectorOptions, cutoff: number): Promise<number> {
  const { db, blobs } = options;
  const candidates = await db
    .select({ orgId: registryBlobs.orgId, digest: registryBlobs.digest })
    .from(registryBlobs)
    .where(
      and(
        lt(registryBlobs.createdAt, cutoff),
        sql`not exists (select 1 from ${registryRepositoryBlobs} l
          join ${registryRepositories} repo on repo.id = l.repository_id
          where repo.org_id = ${registryBlobs.orgId} and l.digest = ${registryBlobs.digest})`,
      ),
    )
    .limit(BATCH);
  let deleted = 0;
  for (const candidate of candidates) {
    const storageKey = await db.transaction(async (tx) => {
      const [row] = await tx
        .select({ storageKey: registryBlobs.storageKey })
        .from(registryBlobs)
        .where(and(eq(registryBlobs.orgId, candidate.orgId), eq(registryBlobs.digest, candidate.digest)))
        .for("update");
      if (!row || (await inUse(tx, candidate.orgId, candidate.digest))) return undefined;
      await tx
        .delete(registryBlobs)
        .where(and(eq(registryBlobs.orgId, candidate.orgId), eq(registryBlobs.digest, candidate.digest)));
      // Two such deletes at once may each see the other's row and both keep the object: the
      // orphan sweep takes it then.
      const [shared] = await tx
        .select({ orgId: registryBlobs.orgId })
        .from(registryBlobs)
        .where(eq(registryBlobs.storageKey, row.storageKey))
        .limit(1);
      return shared ? null : row.storageKey;
    });
    if (storageKey === undefined) continue;
    if (storageKey !== null) await blobs.delete(storageKey);
    deleted++;
  }
  return deleted;
}

/**
 * An expired upload's row goes first (a late chunk then finds no upload), then its parts, except a
 * part that became a blob's bytes (a single-part upload completed under the same key).
 */
async function deleteExpiredUploads(options: GarbageCollectorOptions, cutoff: number): Promise<number> {
  const { db, blobs } = options;
  const expired = await db
    .delete(registryUploads)
    .where(lt(registryUploads.updatedAt, cutoff))
    .returning({ id: registryUploads.id, parts: registryUploads.parts });
  for (const upload of expired) {
    const keys = upload.parts.map((p) => p.key);
    const kept =
      keys.length === 0
        ? []
        : await db
            .select({ key: registryBlobs.storageKey })
            .from(registryBlobs)
            .where(sql`${registryBlobs.storageKey} like ${uploadPrefix(upload.id) + "%"}`);
    if (kept.length === 0) await blobs.deletePrefix(uploadPrefix(upload.id));
    else for (const key of keys) if (!kept.some((k) => k.key === key)) await blobs.delete(key);
  }
  return expired.length;
}

/**
 * Deletes the objects under SWEPT_FOLDERS written before `cutoff` that neither a blob row nor an
 * upload's part names. Which are named is read in one statement, so one snapshot: an upload that
 * completes meanwhile moves its part from the upload's row to the blob's at once. A row only ever
 * comes to name an object that a row named already (a completed part, a mount) or one written just
 * before it (younger than the cutoff), so an object found unnamed stays unnamed.
 */
async function deleteOrphanObjects(options: GarbageCollectorOptions, cutoff: number): Promise<number> {
  const { db, blobs } = options;
  let deleted = 0;
  const deleteUnnamed = async (keys: string[]) => {
    const candidates = sql.join(
      keys.map((key) => sql`(${key})`),
      sql`, `,
    );
    const unnamed = await db.execute(sql`select k.key from (values ${candidates}) as k(key)
      where not exists (select 1 from ${registryBlobs} b where b.storage_key = k.key)
        and not exists (select 1 from ${registryUploads} u
          where u.parts @> jsonb_build_array(jsonb_build_object('key', k.key)))`);
    for (const { key } of resultRows<{ key: string }>(unnamed)) if (await blobs.delete(key)) deleted++;
  };
  for (const folder of SWEPT_FOLDERS) {
    let batch: string[] = [];
    for await (const object of blobs.list(folder)) {
      if (object.updatedAt >= cutoff) continue;
      batch.push(object.key);
      if (batch.length === BATCH) {
        await deleteUnnamed(batch);
        batch = [];
      }
    }
    if (batch.length > 0) await deleteUnnamed(batch);
  }
  return deleted;
}

/** The periodic sweep in the server's background. */
export function startGarbageCollector(
  options: GarbageCollectorOptions & { readonly intervalMs?: number; readonly onError: (error: unknown) => void },
): PollLoop {
  return startPollLoop(
    async () => {
      const collected = await collectGarbage(options);
      return collected.blobs >= BATCH;
    },
    { pollMs: options.intervalMs ?? GC_INTERVAL_MS, onError: options.onError },
  );
}
