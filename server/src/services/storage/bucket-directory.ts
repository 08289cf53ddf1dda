import { and, asc, eq } from "drizzle-orm";
import type { BlobStore, OpenBlob } from "../../blob/blob-store.js";
import type { Database } from "../../db/database.js";
import { checkBucketName, checkObjectKey } from "./bucket-name.js";
import { Listeners, type BucketCreated, type ObjectChange } from "./object-changes.js";
import { objectInfo, type ObjectVersions } from "./object-versions.js";
import { listObjectRows, type ObjectListing, type ListObjectsOptions } from "./object-listing.js";
import { noSuchBucket, S3Error } from "./s3/s3-error.js";
import { storageBuckets, storageObjects, storageUploadParts, storageUploads } from "./storage-schema.js";

export interface Bucket {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  readonly createdAt: number;
}

/** An object's metadata row, as callers see it. */
export interface ObjectInfo {
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  readonly contentType: string;
  /** Unquoted: MD5 hex, or `<hex>-<parts>` for a multipart object. */
  readonly etag: string;
  /** `x-amz-meta-*`, names lower-cased without the prefix. */
  readonly metadata: Readonly<Record<string, string>>;
  readonly lastModified: number;
}

/** An object opened for reading: the row and its content come from the same version. */
export interface OpenObject extends ObjectInfo {
  readonly blob: OpenBlob;
}

export interface PutOptions {
  readonly contentType: string;
  readonly metadata: Readonly<Record<string, string>>;
}

type ObjectRow = typeof storageObjects.$inferSelect;

/**
 * Buckets and objects as other services use them (the S3 listener, ingest rules, the internal
 * object-storage source). Every method takes the organization; a bucket of another organization
 * is NoSuchBucket. Refusals are S3Error with S3's codes (NoSuchBucket, NoSuchKey,
 * BucketAlreadyOwnedByYou, BucketNotEmpty, InvalidBucketName…), which a caller maps to its own
 * shape (NoSuchBucket to NOT_FOUND…).
 */
export interface BucketDirectory {
  getBucket(orgId: string, name: string): Promise<Bucket | undefined>;
  /** NoSuchBucket when the organization has no bucket of that name. */
  requireBucket(orgId: string, name: string): Promise<Bucket>;
  /** The bucket, created if the organization has none of that name (for services that own one). */
  ensureBucket(orgId: string, name: string): Promise<Bucket>;
  /** BucketAlreadyOwnedByYou when the organization has it already. */
  createBucket(orgId: string, name: string): Promise<Bucket>;
  listBuckets(orgId: string): Promise<Bucket[]>;
  /** Only an empty bucket (BucketNotEmpty otherwise); its unfinished multipart uploads go with it. */
  deleteBucket(orgId: string, name: string): Promise<void>;
  listObjects(orgId: string, bucket: string, list: ListObjectsOptions): Promise<ObjectListing>;
  headObject(orgId: string, bucket: string, key: string): Promise<ObjectInfo | undefined>;
  /** The current version opened for reading (close or read its blob), or undefined. */
  readObject(orgId: string, bucket: string, key: string): Promise<OpenObject | undefined>;
  /** Stores `source` as the new version of `key`, streamed, visible once whole. */
  putObject(
    orgId: string,
    bucket: string,
    key: string,
    source: AsyncIterable<Uint8Array>,
    put: PutOptions,
  ): Promise<ObjectInfo>;
  /** Copies the current version of a source object; `put` says the copy's type and metadata. */
  copyObject(
    orgId: string,
    from: { readonly bucket: string; readonly key: string },
    to: { readonly bucket: string; readonly key: string },
    put: (source: ObjectInfo) => PutOptions,
  ): Promise<ObjectInfo>;
  /** Answers whether there was an object; deleting a missing one is no error, as on S3. */
  deleteObject(orgId: string, bucket: string, key: string): Promise<boolean>;
  /** Called after each committed put or delete of an object. Returns the function that stops it. */
  onObjectChanged(listener: (change: ObjectChange) => void | Promise<void>): () => void;
  /** Called after a bucket is created (its internal object-storage source is made from here). */
  onBucketCreated(listener: (event: BucketCreated) => void | Promise<void>): () => void;
}

/** The directory over the organizations' buckets; object versions are written through `versions` (object-versions.ts). */
export function createBucketDirectory(options: {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly versions: ObjectVersions;
  readonly onListenerError?: (error: unknown) => void;
}): BucketDirectory {
  const { db, blobs, versions } = options;
  const bucketCreated = new Listeners<BucketCreated>(options.onListenerError ?? (() => {}));

  const toBucket = (row: typeof storageBuckets.$inferSelect): Bucket => ({
    id: row.id,
    orgId: row.orgId,
    name: row.name,
    createdAt: row.createdAt,
  });

  async function getBucket(orgId: string, name: string): Promise<Bucket | undefined> {
    const [row] = await db
      .select()
      .from(storageBuckets)
      .where(and(eq(storageBuckets.orgId, orgId), eq(storageBuckets.name, name)));
    return row && toBucket(row);
  }

  async function requireBucket(orgId: string, name: string): Promise<Bucket> {
    const bucket = await getBucket(orgId, name);
    if (!bucket) throw noSuchBucket(name);
    return bucket;
  }

  /** Creates the bucket; `created` is false when the organization already had it. */
  async function createOrFind(orgId: string, name: string): Promise<{ bucket: Bucket; created: boolean }> {
    checkBucketName(name);
    const [row] = await db.insert(storageBuckets).values({ orgId, name }).onConflictDoNothing().returning();
    if (!row) return { bucket: (await getBucket(orgId, name))!, created: false };
    const bucket = toBucket(row);
    await bucketCreated.emit({ orgId, bucket: name, bucketId: bucket.id });
    return { bucket, created: true };
  }

  async function objectRow(bucket: Bucket, key: string): Promise<ObjectRow | undefined> {
    const [row] = await db
      .select()
      .from(storageObjects)
      .where(and(eq(storageObjects.bucketId, bucket.id), eq(storageObjects.key, key)));
    return row;
  }

  async function deleteObjectIn(bucket: Bucket, key: string): Promise<boolean> {
    const [row] = await db
      .delete(storageObjects)
      .where(and(eq(storageObjects.bucketId, bucket.id), eq(storageObjects.key, key)))
      .returning();
    if (!row) return false;
    await versions.deleteBlobs([row.blobKey]);
    await versions.objectChanged.emit({
      orgId: bucket.orgId,
      bucket: bucket.name,
      key,
      kind: "delete",
      etag: row.etag,
      size: row.size,
      contentType: row.contentType,
    });
    return true;
  }

  return {
    getBucket,
    requireBucket,

    /** The bucket, created if the organization has none of that name (for services that own one). */
    async ensureBucket(orgId: string, name: string): Promise<Bucket> {
      return (await createOrFind(orgId, name)).bucket;
    },

    /** BucketAlreadyOwnedByYou when the organization has it already. */
    async createBucket(orgId: string, name: string): Promise<Bucket> {
      const { bucket, created } = await createOrFind(orgId, name);
      if (!created)
        throw new S3Error("BucketAlreadyOwnedByYou", "the bucket you tried to create already exists, and you own it", {
          BucketName: name,
        });
      return bucket;
    },

    async listBuckets(orgId: string): Promise<Bucket[]> {
      const rows = await db
        .select()
        .from(storageBuckets)
        .where(eq(storageBuckets.orgId, orgId))
        .orderBy(asc(storageBuckets.name));
      return rows.map(toBucket);
    },

    /** Only an empty bucket (BucketNotEmpty otherwise); its unfinished multipart uploads go with it. */
    async deleteBucket(orgId: string, name: string): Promise<void> {
      const bucket = await requireBucket(orgId, name);
      const partBlobs = await db.transaction(async (tx) => {
        await tx.select().from(storageBuckets).where(eq(storageBuckets.id, bucket.id)).for("update");
        const [object] = await tx
          .select({ key: storageObjects.key })
          .from(storageObjects)
          .where(eq(storageObjects.bucketId, bucket.id))
          .limit(1);
        if (object)
          throw new S3Error("BucketNotEmpty", "the bucket you tried to delete is not empty", { BucketName: name });
        const parts = await tx
          .select({ blobKey: storageUploadParts.blobKey })
          .from(storageUploadParts)
          .innerJoin(storageUploads, eq(storageUploads.id, storageUploadParts.uploadId))
          .where(eq(storageUploads.bucketId, bucket.id));
        await tx.delete(storageBuckets).where(eq(storageBuckets.id, bucket.id));
        return parts.map((p) => p.blobKey);
      });
      await versions.deleteBlobs(partBlobs);
    },

    async listObjects(orgId: string, bucketName: string, list: ListObjectsOptions): Promise<ObjectListing> {
      const bucket = await requireBucket(orgId, bucketName);
      return listObjectRows(db, bucket.id, list);
    },

    async headObject(orgId: string, bucketName: string, key: string): Promise<ObjectInfo | undefined> {
      checkObjectKey(key);
      const bucket = await requireBucket(orgId, bucketName);
      const row = await objectRow(bucket, key);
      return row && objectInfo(bucket.name, row);
    },

    /**
     * The current version opened for reading, or undefined. A version replaced between reading
     * its row and opening its blob is read again: the blob of a replaced version is deleted.
     */
    async readObject(orgId: string, bucketName: string, key: string): Promise<OpenObject | undefined> {
      checkObjectKey(key);
      const bucket = await requireBucket(orgId, bucketName);
      for (let attempt = 0; attempt < 5; attempt++) {
        const row = await objectRow(bucket, key);
        if (!row) return undefined;
        const blob = await blobs.open(row.blobKey);
        if (blob) return { ...objectInfo(bucket.name, row), blob };
      }
      throw new S3Error("InternalError", "the object changed too often while it was being opened: try again");
    },

    /** Stores `source` as the new version of `key`. */
    async putObject(
      orgId: string,
      bucketName: string,
      key: string,
      source: AsyncIterable<Uint8Array>,
      put: PutOptions,
    ): Promise<ObjectInfo> {
      checkObjectKey(key);
      const bucket = await requireBucket(orgId, bucketName);
      const { blobKey, size, md5 } = await versions.storeContent(orgId, source);
      return versions.commitObject(bucket, key, { blobKey, size, etag: md5 }, put);
    },

    /** Copies the current version of a source object; `put` says the copy's type and metadata. */
    async copyObject(
      orgId: string,
      from: { readonly bucket: string; readonly key: string },
      to: { readonly bucket: string; readonly key: string },
      put: (source: ObjectInfo) => PutOptions,
    ): Promise<ObjectInfo> {
      checkObjectKey(to.key);
      const target = await requireBucket(orgId, to.bucket);
      const source = await this.readObject(orgId, from.bucket, from.key);
      if (!source) throw new S3Error("NoSuchKey", "the specified key does not exist", { Key: from.key });
      const { blobKey, size, md5 } = await versions.storeContent(orgId, source.blob.read());
      return versions.commitObject(target, to.key, { blobKey, size, etag: md5 }, put(source));
    },

    /** Answers whether there was an object; deleting a missing one is no error, as on S3. */
    async deleteObject(orgId: string, bucketName: string, key: string): Promise<boolean> {
      checkObjectKey(key);
      return deleteObjectIn(await requireBucket(orgId, bucketName), key);
    },

    /** Called after each committed put or delete of an object. Returns the function that stops it. */
    onObjectChanged(listener: (change: ObjectChange) => void | Promise<void>): () => void {
      return versions.objectChanged.add(listener);
    },

    /** Called after a bucket is created (the object-storage source is made from here). */
    onBucketCreated(listener: (event: BucketCreated) => void | Promise<void>): () => void {
      return bucketCreated.add(listener);
    },
  };
}
