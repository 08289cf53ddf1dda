import { bigint, index, integer, jsonb, pgTable, primaryKey, text, unique, uuid } from "drizzle-orm/pg-core";
import { organizations } from "../../auth/auth-schema.js";
import { epochMs, nowMs } from "../../db/column-types.js";

/**
 * The tables of the object storage service: buckets per organization, the metadata of their
 * objects, and multipart uploads in progress. Object content lives in the BlobStore under
 * `storage/<org id>/<random id>`: every version of an object gets a fresh blob, so replacing an
 * object never overwrites bytes a reader may still be streaming, and the row is what makes a
 * version visible.
 */

export const storageBuckets = pgTable(
  "storage_buckets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** S3 rules (3-63 characters, lower-case letters, digits, hyphens, dots); unique per organization. */
    name: text("name").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [unique("storage_buckets_org_name_unique").on(t.orgId, t.name)],
);

export const storageObjects = pgTable(
  "storage_objects",
  {
    bucketId: uuid("bucket_id")
      .notNull()
      .references(() => storageBuckets.id, { onDelete: "cascade" }),
    /** The S3 key, any UTF-8 up to 1024 bytes; `collate "C"` in the migration, so listings order by bytes as S3 does. */
    key: text("key").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    contentType: text("content_type").notNull(),
    /** As S3 sends it, without quotes: MD5 hex, or `<md5 of part md5s>-<parts>` for multipart. */
    etag: text("etag").notNull(),
    /** `x-amz-meta-*` headers, names lower-cased without the prefix. */
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    blobKey: text("blob_key").notNull(),
    lastModified: epochMs("last_modified").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.bucketId, t.key] })],
);

export const storageUploads = pgTable(
  "storage_uploads",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    bucketId: uuid("bucket_id")
      .notNull()
      .references(() => storageBuckets.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    contentType: text("content_type").notNull(),
    metadata: jsonb("metadata").$type<Record<string, string>>().notNull().default({}),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [index("storage_uploads_bucket_idx").on(t.bucketId, t.key, t.createdAt)],
);

export const storageUploadParts = pgTable(
  "storage_upload_parts",
  {
    uploadId: uuid("upload_id")
      .notNull()
      .references(() => storageUploads.id, { onDelete: "cascade" }),
    partNumber: integer("part_number").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    /** MD5 hex of the part, without quotes. */
    etag: text("etag").notNull(),
    blobKey: text("blob_key").notNull(),
    lastModified: epochMs("last_modified").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.uploadId, t.partNumber] })],
);
