import type { JsonObject } from "@bufbuild/protobuf";
import { sql } from "drizzle-orm";
import { boolean, index, jsonb, pgTable, text, uniqueIndex, uuid, type AnyPgColumn } from "drizzle-orm/pg-core";
import { organizations } from "../../auth/auth-schema.js";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";

/** The tables of the source service: the sources of buckets and the organization's credentials. */

/**
 * Stored provider names: the enum's value names without their prefix, in lower case, so a row
 * reads the same in psql as in the contract and survives a renumbering that could never happen.
 */
export const PROVIDER_NAMES = [
  "internal",
  "amazon_s3",
  "google_cloud_storage",
  "azure_blob_storage",
  "google_drive",
  "microsoft_onedrive",
  "dropbox",
  "box",
  "notion",
  "confluence",
  "slack",
  "github",
  "web",
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export const CREDENTIAL_TYPES = ["oauth", "api_key", "token", "access_key"] as const;
export type CredentialTypeName = (typeof CREDENTIAL_TYPES)[number];

/** A credential: metadata in columns, the secret sealed (AES-256-GCM) and bound to its row. */
export const sourceCredentials = pgTable(
  "source_credentials",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    provider: text("provider", { enum: PROVIDER_NAMES }).notNull(),
    type: text("type", { enum: CREDENTIAL_TYPES }).notNull(),
    /** The source it was stored for; cleared, not cascaded, when that source is deleted. */
    sourceId: uuid("source_id").references((): AnyPgColumn => sources.id, { onDelete: "set null" }),
    scopes: text("scopes")
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** Expiry of the current OAuth access token; 0 when the secret does not expire. */
    expiresAt: epochMs("expires_at").notNull().default(0),
    /** The CredentialSecret JSON, sealed by the secret box with the row's id as associated data. */
    sealedSecret: bytea("sealed_secret").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [index("source_credentials_org_idx").on(t.orgId, t.createdAt)],
);

/** A source of a bucket; `internal` marks the one created with the bucket, at most one per bucket. */
export const sources = pgTable(
  "source_sources",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    provider: text("provider", { enum: PROVIDER_NAMES }).notNull(),
    /** Cleared when the credential is deleted: the source then fails its next sync until given another. */
    credentialId: uuid("credential_id").references((): AnyPgColumn => sourceCredentials.id, {
      onDelete: "set null",
    }),
    /** Provider settings, validated per provider (source-config.ts); never secrets. */
    config: jsonb("config")
      .$type<JsonObject>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    internal: boolean("internal").notNull().default(false),
    status: text("status", { enum: ["active", "error"] })
      .notNull()
      .default("active"),
    errorMessage: text("error_message").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    uniqueIndex("source_sources_name_idx").on(t.orgId, t.bucket, t.name),
    uniqueIndex("source_sources_internal_idx")
      .on(t.orgId, t.bucket)
      .where(sql`${t.internal}`),
  ],
);
