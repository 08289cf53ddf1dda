import { boolean, index, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../db/column-types.js";

/**
 * The organizations, their API keys and the roles granted to those keys, which every call's
 * authentication reads and every service's tables hang from: every row of tenant
 * data carries `org_id`, and stores filter by it on every query, so another organization's row is
 * simply not found.
 */

export const organizations = pgTable("organizations", {
  id: uuid("id").primaryKey().defaultRandom(),
  /** URL-safe slug, unique: the value of `x-organization-name`. */
  name: text("name").notNull().unique(),
  displayName: text("display_name").notNull().default(""),
  /** The platform's own organization, which holds the operator credential. */
  system: boolean("system").notNull().default(false),
  createdAt: epochMs("created_at").notNull().default(nowMs),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** SHA-256 of the secret, hex: the secret itself is never stored. */
    secretHash: text("secret_hash").notNull().unique(),
    /** The first characters of the secret, to recognise a key in listings. */
    secretPrefix: text("secret_prefix").notNull(),
    state: text("state", { enum: ["active", "revoked"] })
      .notNull()
      .default("active"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    expiresAt: epochMs("expires_at").notNull().default(0),
    lastUsedAt: epochMs("last_used_at").notNull().default(0),
    rotatedAt: epochMs("rotated_at").notNull().default(0),
    revokedAt: epochMs("revoked_at").notNull().default(0),
    /**
     * The key's S3 secret access key (derived from the secret, see s3-secret.ts), sealed with the
     * SecretBox: SigV4 needs the secret itself on the server, which the hash cannot give. Null for
     * a key issued before the S3 listener existed, until its bearer secret is next verified.
     */
    s3SecretSealed: bytea("s3_secret_sealed"),
  },
  (t) => [index("api_keys_org_idx").on(t.orgId, t.createdAt)],
);

/** Roles granted to a principal (an API key id), organization-wide or on one resource. */
export const permissions = pgTable(
  "permissions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    principal: text("principal").notNull(),
    role: text("role").notNull(),
    resource: text("resource").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    unique("permissions_grant_unique").on(t.orgId, t.principal, t.role, t.resource),
    index("permissions_principal_idx").on(t.principal),
  ],
);
