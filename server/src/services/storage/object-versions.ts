import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import type { BlobStore } from "../../blob/blob-store.js";
import type { Database } from "../../db/database.js";
import { isForeignKeyViolation } from "../../db/sql-state.js";
import type { Bucket, ObjectInfo, PutOptions } from "./bucket-directory.js";
import { measureBody, type MeasuredBody } from "./object-body.js";
import { Listeners, type ObjectChange } from "./object-changes.js";
import { noSuchBucket } from "./s3/s3-error.js";
import { storageObjects } from "./storage-schema.js";

/** A stored version ready to become visible: written to the blob store, not yet in a row. */
export interface StoredContent {
  readonly blobKey: string;
  readonly size: number;
  readonly etag: string;
}

type ObjectRow = typeof storageObjects.$inferSelect;
type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];

export function objectInfo(bucket: string, row: ObjectRow): ObjectInfo {
  return {
    bucket,
    key: row.key,
    size: row.size,
    contentType: row.contentType,
    etag: row.etag,
    metadata: row.metadata,
    lastModified: row.lastModified,
  };
}

/**
 * How an object version comes to be, for single PUTs, copies and multipart completions alike:
 * its content is written to the blob store first, under a fresh key per version, and becomes
 * visible only when its row commits. A crash between the two leaves an unreferenced blob, never a
 * half object; the blob a row replaced or dropped is deleted after the commit, and readers that
 * opened it before keep reading it. Listeners hear of each change once it committed.
 */
export function createObjectVersions(options: {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly onListenerError?: (error: unknown) => void;
}) {
  const { db, blobs } = options;
  const report = options.onListenerError ?? (() => {});
  const objectChanged = new Listeners<ObjectChange>(report);

  /** Blobs no row points to any more; a failure is reported, never thrown: the change is done. */
  async function deleteBlobs(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => blobs.delete(key).catch(report)));
  }

  return {
    objectChanged,
    deleteBlobs,

    /** Writes a version's content to a fresh blob, measuring it (size, MD5). Nothing is visible yet. */
    async storeContent(orgId: string, source: AsyncIterable<Uint8Array>, maxBytes?: number) {
      const blobKey = `storage/${orgId}/${randomUUID()}`;
      const measured: MeasuredBody = { size: 0, md5: "" };
      await blobs.write(blobKey, measureBody(source, measured, maxBytes), { contentType: "application/octet-stream" });
      return { blobKey, size: measured.size, md5: measured.md5 };
    },

    /**
     * Makes `content` the current version of `key`: the replaced version's row is locked and
     * overwritten, and its blob deleted once committed. `inTransaction` runs in the same
     * transaction (a multipart completion removes its upload there). The new blob is deleted
     * when this fails.
     */
    async commitObject(
      bucket: Bucket,
      key: string,
      content: StoredContent,
      put: PutOptions,
      inTransaction?: (tx: Transaction) => Promise<void>,
    ): Promise<ObjectInfo> {
      let replaced: string | undefined;
      let row: ObjectRow;
      try {
        row = await db.transaction(async (tx) => {
          const [old] = await tx
            .select({ blobKey: storageObjects.blobKey })
            .from(storageObjects)
            .where(and(eq(storageObjects.bucketId, bucket.id), eq(storageObjects.key, key)))
            .for("update");
          replaced = old?.blobKey;
          const values = {
            bucketId: bucket.id,
            key,
            size: content.size,
            contentType: put.contentType,
            etag: content.etag,
            metadata: { ...put.metadata },
            blobKey: content.blobKey,
            lastModified: Date.now(),
          };
          const [written] = await tx
            .insert(storageObjects)
            .values(values)
            .onConflictDoUpdate({ target: [storageObjects.bucketId, storageObjects.key], set: values })
            .returning();
          await inTransaction?.(tx);
          return written!;
        });
      } catch (error) {
        await deleteBlobs([content.blobKey]);
        // The bucket was deleted while the content was written: its foreign key refuses the row.
        if (isForeignKeyViolation(error)) throw noSuchBucket(bucket.name);
        throw error;
      }
      if (replaced) await deleteBlobs([replaced]);
      const info = objectInfo(bucket.name, row);
      await objectChanged.emit({
        orgId: bucket.orgId,
        bucket: bucket.name,
        key,
        kind: "put",
        etag: info.etag,
        size: info.size,
        contentType: info.contentType,
      });
      return info;
    },
  };
}

export type ObjectVersions = ReturnType<typeof createObjectVersions>;
