import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/**
 * The tables of the container registry. Content (layers, configs) lives in object storage and is
 * shared by every repository of an organization: a blob row says the organization holds those
 * bytes, a repository link says one repository may serve them. Manifests are small (4 MiB at most)
 * and live in the database, so a manifest, its tags and its references commit together.
 */

/** One repository, created by the first push to `<org>/<name>`. */
export const registryRepositories = pgTable(
  "registry_repositories",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The path after the organization: `app` or `team/app` (OCI name components, lower case). */
    name: text("name").notNull(),
    /** Anonymous pulls allowed. */
    public: boolean("public").notNull().default(false),
    /** Glob patterns of tags that, once pushed, may not be moved or deleted. */
    immutableTagPatterns: text("immutable_tag_patterns")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** Manifest GETs (not HEADs) by tag or digest. */
    pullCount: bigint("pull_count", { mode: "number" }).notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [uniqueIndex("registry_repositories_org_name").on(t.orgId, t.name)],
);

/** Bytes an organization holds once, whatever the number of repositories that use them. */
export const registryBlobs = pgTable(
  "registry_blobs",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** `sha256:<64 hex>` or `sha512:<128 hex>`, as clients name it. */
    digest: text("digest").notNull(),
    size: bigint("size", { mode: "number" }).notNull(),
    /**
     * Where the bytes are in object storage (an upload's part, kept in place when it was a single
     * one; another organization's object after a mount from its public repository).
     */
    storageKey: text("storage_key").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  // Several organizations' rows may name one object (a mount from another organization's public
  // repository): the object goes when the last row naming it does.
  (t) => [primaryKey({ columns: [t.orgId, t.digest] }), index("registry_blobs_storage_key").on(t.storageKey)],
);

/** Blobs a repository may serve: uploaded or mounted into it, or referenced by one of its manifests. */
export const registryRepositoryBlobs = pgTable(
  "registry_repository_blobs",
  {
    repositoryId: uuid("repository_id")
      .notNull()
      .references(() => registryRepositories.id, { onDelete: "cascade" }),
    digest: text("digest").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.repositoryId, t.digest] })],
);

/** A manifest (image, index, artifact) of one repository, with its exact bytes. */
export const registryManifests = pgTable(
  "registry_manifests",
  {
    repositoryId: uuid("repository_id")
      .notNull()
      .references(() => registryRepositories.id, { onDelete: "cascade" }),
    digest: text("digest").notNull(),
    mediaType: text("media_type").notNull(),
    /** The manifest's artifactType, else its config's media type (what the referrers API filters on). */
    artifactType: text("artifact_type"),
    /** The digest in the manifest's `subject`, for the referrers API. */
    subjectDigest: text("subject_digest"),
    /** Annotations, returned in referrers descriptors. */
    annotations: jsonb("annotations").$type<Record<string, string>>(),
    content: bytea("content").notNull(),
    /** The manifest plus everything it references (config and layers; children for an index). */
    totalSize: bigint("total_size", { mode: "number" }).notNull(),
    pushedAt: epochMs("pushed_at").notNull().default(nowMs),
    /** Last manifest GET; null until pulled. */
    pulledAt: epochMs("pulled_at"),
  },
  (t) => [
    primaryKey({ columns: [t.repositoryId, t.digest] }),
    index("registry_manifests_subject").on(t.repositoryId, t.subjectDigest),
  ],
);

/** What a manifest references: its config and layers (`blob`) or, for an index, its manifests (`manifest`). */
export const registryManifestReferences = pgTable(
  "registry_manifest_references",
  {
    repositoryId: uuid("repository_id")
      .notNull()
      .references(() => registryRepositories.id, { onDelete: "cascade" }),
    manifestDigest: text("manifest_digest").notNull(),
    childDigest: text("child_digest").notNull(),
    kind: text("kind", { enum: ["blob", "manifest"] }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.repositoryId, t.manifestDigest, t.childDigest] }),
    index("registry_manifest_references_child").on(t.repositoryId, t.childDigest),
  ],
);

/** A tag points at one manifest of its repository. */
export const registryTags = pgTable(
  "registry_tags",
  {
    repositoryId: uuid("repository_id")
      .notNull()
      .references(() => registryRepositories.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    manifestDigest: text("manifest_digest").notNull(),
    pushedAt: epochMs("pushed_at").notNull().default(nowMs),
    /** Last manifest GET through this tag; null until pulled. */
    pulledAt: epochMs("pulled_at"),
  },
  (t) => [
    primaryKey({ columns: [t.repositoryId, t.name] }),
    index("registry_tags_manifest").on(t.repositoryId, t.manifestDigest),
  ],
);

/**
 * A blob upload in progress. Each PATCH (or the body of a monolithic PUT/POST) is written whole
 * to its own object as a part; the row moves forward only when a part is complete, so a crash
 * mid-chunk leaves the upload resumable at the last complete part.
 */
export const registryUploads = pgTable(
  "registry_uploads",
  {
    id: uuid("id").primaryKey(),
    repositoryId: uuid("repository_id")
      .notNull()
      .references(() => registryRepositories.id, { onDelete: "cascade" }),
    /** Bytes received in complete parts: the next chunk must start here. */
    size: bigint("size", { mode: "number" }).notNull().default(0),
    parts: jsonb("parts")
      .$type<{ key: string; size: number; sha256: string }[]>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [index("registry_uploads_updated").on(t.updatedAt)],
);

/** Per-organization storage quota, in bytes of distinct blobs and manifests; no row means no quota. */
export const registryQuotas = pgTable("registry_quotas", {
  orgId: uuid("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  limitBytes: bigint("limit_bytes", { mode: "number" }).notNull(),
});

/** The vulnerability scan of one image manifest of an organization (the same digest scans once). */
export const registryScans = pgTable(
  "registry_scans",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    manifestDigest: text("manifest_digest").notNull(),
    /** `Pending`, `Running`, `Success`, `Error`, `Unsupported` or `NoFeed` (no advisory feed configured). */
    status: text("status").notNull(),
    severity: text("severity"),
    total: integer("total"),
    fixable: integer("fixable"),
    /** The full report's vulnerabilities list, worst first. */
    report: jsonb("report"),
    /** When the feed this result was matched against was loaded, to rescan after a refresh. */
    feedVersion: text("feed_version"),
    errorMessage: text("error_message"),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.manifestDigest] })],
);
