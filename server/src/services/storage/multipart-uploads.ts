import { createHash } from "node:crypto";
import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { isForeignKeyViolation } from "../../db/sql-state.js";
import type { BlobStore } from "../../blob/blob-store.js";
import type { BucketDirectory, ObjectInfo, PutOptions } from "./bucket-directory.js";
import type { ObjectVersions } from "./object-versions.js";
import { checkObjectKey } from "./bucket-name.js";
import { noSuchBucket, S3Error } from "./s3/s3-error.js";
import { storageUploadParts, storageUploads } from "./storage-schema.js";

/** S3's bounds: parts 1 to 10,000, each but the last at least 5 MiB. */
export const MAX_PART_NUMBER = 10_000;
export const MIN_PART_BYTES = 5 * 1024 * 1024;

export interface Upload {
  readonly uploadId: string;
  readonly key: string;
  readonly createdAt: number;
}

export interface Part {
  readonly partNumber: number;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: number;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const noSuchUpload = (uploadId: string) =>
  new S3Error(
    "NoSuchUpload",
    "the specified multipart upload does not exist: the upload ID may be invalid, or the upload may have been aborted or completed",
    { UploadId: uploadId.slice(0, 64) },
  );

/**
 * Multipart uploads: parts are stored as blobs of their own and listed in rows; completing one
 * streams the chosen parts, in order, into one new blob and commits the object row and the removal
 * of the upload in one transaction. The object's etag is S3's: the MD5 of the parts' binary MD5s,
 * a dash and the number of parts.
 */
export function createMultipartUploads(options: {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly directory: BucketDirectory;
  readonly versions: ObjectVersions;
  /** Smallest part but the last; S3's 5 MiB unless a test says otherwise. */
  readonly minPartBytes?: number;
}) {
  const { db, blobs, directory } = options;
  const { storeContent, commitObject, deleteBlobs } = options.versions;
  const minPartBytes = options.minPartBytes ?? MIN_PART_BYTES;

  /** The upload row, when it belongs to this bucket and key; NoSuchUpload otherwise. */
  async function findUpload(bucketId: string, key: string, uploadId: string) {
    if (!uuidPattern.test(uploadId)) throw noSuchUpload(uploadId);
    const [upload] = await db
      .select()
      .from(storageUploads)
      .where(and(eq(storageUploads.id, uploadId), eq(storageUploads.bucketId, bucketId), eq(storageUploads.key, key)));
    if (!upload) throw noSuchUpload(uploadId);
    return upload;
  }

  return {
    async create(orgId: string, bucketName: string, key: string, put: PutOptions): Promise<Upload> {
      checkObjectKey(key);
      const bucket = await directory.requireBucket(orgId, bucketName);
      const [row] = await db
        .insert(storageUploads)
        .values({ bucketId: bucket.id, key, contentType: put.contentType, metadata: { ...put.metadata } })
        .returning()
        .catch((error: unknown) => {
          // The bucket was deleted since it was looked up.
          throw isForeignKeyViolation(error) ? noSuchBucket(bucketName) : error;
        });
      return { uploadId: row!.id, key, createdAt: row!.createdAt };
    },

    /** Stores one part, replacing a part of the same number. */
    async uploadPart(
      orgId: string,
      bucketName: string,
      key: string,
      uploadId: string,
      partNumber: number,
      source: AsyncIterable<Uint8Array>,
    ): Promise<Part> {
      if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER)
        throw new S3Error("InvalidArgument", `partNumber: must be an integer from 1 to ${MAX_PART_NUMBER}`);
      const bucket = await directory.requireBucket(orgId, bucketName);
      await findUpload(bucket.id, key, uploadId);
      const content = await storeContent(orgId, source);
      let replaced: string | undefined;
      let row: typeof storageUploadParts.$inferSelect;
      try {
        row = await db.transaction(async (tx) => {
          // The upload is locked so that a completion or abort cannot run between check and insert.
          const [upload] = await tx
            .select({ id: storageUploads.id })
            .from(storageUploads)
            .where(eq(storageUploads.id, uploadId))
            .for("update");
          if (!upload) throw noSuchUpload(uploadId);
          const [old] = await tx
            .select({ blobKey: storageUploadParts.blobKey })
            .from(storageUploadParts)
            .where(and(eq(storageUploadParts.uploadId, uploadId), eq(storageUploadParts.partNumber, partNumber)));
          replaced = old?.blobKey;
          const values = {
            uploadId,
            partNumber,
            size: content.size,
            etag: content.md5,
            blobKey: content.blobKey,
            lastModified: Date.now(),
          };
          const [written] = await tx
            .insert(storageUploadParts)
            .values(values)
            .onConflictDoUpdate({ target: [storageUploadParts.uploadId, storageUploadParts.partNumber], set: values })
            .returning();
          return written!;
        });
      } catch (error) {
        await deleteBlobs([content.blobKey]);
        throw error;
      }
      if (replaced) await deleteBlobs([replaced]);
      return { partNumber, size: row.size, etag: row.etag, lastModified: row.lastModified };
    },

    /**
     * Assembles the listed parts into the object. The list must be in ascending part order
     * (InvalidPartOrder), name uploaded parts with their etags (InvalidPart), and every part but the
     * last must be at least 5 MiB (EntityTooSmall).
     */
    async complete(
      orgId: string,
      bucketName: string,
      key: string,
      uploadId: string,
      chosen: readonly { readonly partNumber: number; readonly etag: string }[],
    ): Promise<ObjectInfo> {
      const bucket = await directory.requireBucket(orgId, bucketName);
      const upload = await findUpload(bucket.id, key, uploadId);
      if (chosen.length === 0) throw new S3Error("MalformedXML", "CompleteMultipartUpload must list at least one part");
      const stored = await db
        .select()
        .from(storageUploadParts)
        .where(eq(storageUploadParts.uploadId, uploadId))
        .orderBy(asc(storageUploadParts.partNumber));
      const byNumber = new Map(stored.map((part) => [part.partNumber, part]));
      chosen.forEach((wanted, i) => {
        if (i > 0 && wanted.partNumber <= chosen[i - 1]!.partNumber)
          throw new S3Error(
            "InvalidPartOrder",
            "the list of parts was not in ascending order: sort them by part number",
          );
      });
      const parts = chosen.map((wanted) => {
        const part = byNumber.get(wanted.partNumber);
        if (!part || part.etag !== wanted.etag.replaceAll('"', "").toLowerCase()) {
          throw new S3Error(
            "InvalidPart",
            `part ${wanted.partNumber} was not uploaded, or its entity tag does not match the part's`,
            { PartNumber: String(wanted.partNumber), UploadId: uploadId },
          );
        }
        return part;
      });
      parts.slice(0, -1).forEach((part) => {
        if (part.size < minPartBytes)
          throw new S3Error(
            "EntityTooSmall",
            `part ${part.partNumber} is smaller than the minimum of ${minPartBytes} bytes`,
            {
              PartNumber: String(part.partNumber),
            },
          );
      });
      const digests = createHash("md5");
      for (const part of parts) digests.update(Buffer.from(part.etag, "hex"));
      const etag = `${digests.digest("hex")}-${parts.length}`;

      async function* concatenated() {
        for (const part of parts) {
          const blob = await blobs.open(part.blobKey);
          if (!blob) throw noSuchUpload(uploadId);
          yield* blob.read();
        }
      }
      const content = await storeContent(orgId, concatenated(), Number.MAX_SAFE_INTEGER);
      let partBlobs: string[] = [];
      const info = await commitObject(
        bucket,
        key,
        { blobKey: content.blobKey, size: content.size, etag },
        { contentType: upload.contentType, metadata: upload.metadata },
        async (tx) => {
          // Read again here: a part uploaded while the parts were being joined is removed too.
          const current = await tx
            .select({ blobKey: storageUploadParts.blobKey })
            .from(storageUploadParts)
            .where(eq(storageUploadParts.uploadId, uploadId));
          const [gone] = await tx.delete(storageUploads).where(eq(storageUploads.id, uploadId)).returning();
          // Completed or aborted meanwhile: the whole completion rolls back.
          if (!gone) throw noSuchUpload(uploadId);
          partBlobs = current.map((part) => part.blobKey);
        },
      );
      await deleteBlobs(partBlobs);
      return info;
    },

    async abort(orgId: string, bucketName: string, key: string, uploadId: string): Promise<void> {
      const bucket = await directory.requireBucket(orgId, bucketName);
      await findUpload(bucket.id, key, uploadId);
      const parts = await db.transaction(async (tx) => {
        const blobsOf = await tx
          .select({ blobKey: storageUploadParts.blobKey })
          .from(storageUploadParts)
          .where(eq(storageUploadParts.uploadId, uploadId));
        const [gone] = await tx.delete(storageUploads).where(eq(storageUploads.id, uploadId)).returning();
        if (!gone) throw noSuchUpload(uploadId);
        return blobsOf.map((p) => p.blobKey);
      });
      await deleteBlobs(parts);
    },

    async listParts(
      orgId: string,
      bucketName: string,
      key: string,
      uploadId: string,
      page: { readonly after: number; readonly maxParts: number },
    ): Promise<{ parts: Part[]; isTruncated: boolean }> {
      const bucket = await directory.requireBucket(orgId, bucketName);
      await findUpload(bucket.id, key, uploadId);
      const rows = await db
        .select()
        .from(storageUploadParts)
        .where(and(eq(storageUploadParts.uploadId, uploadId), gt(storageUploadParts.partNumber, page.after)))
        .orderBy(asc(storageUploadParts.partNumber))
        .limit(page.maxParts + 1);
      const parts = rows.slice(0, page.maxParts).map(({ partNumber, size, etag, lastModified }) => ({
        partNumber,
        size,
        etag,
        lastModified,
      }));
      return { parts, isTruncated: rows.length > page.maxParts };
    },

    /** Unfinished uploads by key, then by age; `after` is the last key and upload id of the previous page. */
    async listUploads(
      orgId: string,
      bucketName: string,
      page: {
        readonly prefix: string;
        readonly keyMarker: string;
        readonly uploadIdMarker: string;
        readonly maxUploads: number;
      },
    ): Promise<{ uploads: Upload[]; isTruncated: boolean }> {
      const bucket = await directory.requireBucket(orgId, bucketName);
      const rows = await db
        .select()
        .from(storageUploads)
        .where(
          and(
            eq(storageUploads.bucketId, bucket.id),
            page.prefix === "" ? undefined : sql`starts_with(${storageUploads.key}, ${page.prefix})`,
            page.keyMarker === ""
              ? undefined
              : page.uploadIdMarker === "" || !uuidPattern.test(page.uploadIdMarker)
                ? gt(storageUploads.key, page.keyMarker)
                : or(
                    gt(storageUploads.key, page.keyMarker),
                    and(eq(storageUploads.key, page.keyMarker), gt(storageUploads.id, page.uploadIdMarker)),
                  ),
          ),
        )
        .orderBy(asc(storageUploads.key), asc(storageUploads.id))
        .limit(page.maxUploads + 1);
      const uploads = rows
        .slice(0, page.maxUploads)
        .map((row) => ({ uploadId: row.id, key: row.key, createdAt: row.createdAt }));
      return { uploads, isTruncated: rows.length > page.maxUploads };
    },
  };
}

export type MultipartUploads = ReturnType<typeof createMultipartUploads>;
