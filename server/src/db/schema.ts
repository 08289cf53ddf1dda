import { sql } from "drizzle-orm";
import { bigint, boolean, customType, foreignKey, index, integer, jsonb, pgTable, primaryKey, text, unique, uuid } from "drizzle-orm/pg-core";

/**
 * The database schema of the whole platform: one drizzle schema for the embedded PGlite and for
 * PostgreSQL. Every row of tenant data carries `org_id`; stores filter by it on every query, so
 * another organization's row is simply not found.
 *
 * Times are stored as epoch milliseconds (`bigint`, read as JS numbers), the unit of the contract.
 */

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  // postgres-js gives a Buffer, PGlite a Uint8Array: hand out plain Uint8Arrays either way.
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

const epochMs = (name: string) => bigint(name, { mode: "number" });
// The statement's start time: every default of one INSERT gets the same instant (created = updated).
const nowMs = sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`;

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
    state: text("state", { enum: ["active", "revoked"] }).notNull().default("active"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    expiresAt: epochMs("expires_at").notNull().default(0),
    lastUsedAt: epochMs("last_used_at").notNull().default(0),
    rotatedAt: epochMs("rotated_at").notNull().default(0),
    revokedAt: epochMs("revoked_at").notNull().default(0),
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
  (t) => [unique("permissions_grant_unique").on(t.orgId, t.principal, t.role, t.resource), index("permissions_principal_idx").on(t.principal)],
);

/** Tenant-wide environment variables of the script service. */
export const envVars = pgTable(
  "env_vars",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    value: text("value").notNull(),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.key] })],
);

/** The per-script environment overlay. */
export const scriptEnvVars = pgTable(
  "script_env_vars",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    scriptName: text("script_name").notNull(),
    key: text("key").notNull(),
    value: text("value").notNull(),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.scriptName, t.key] })],
);

/** Named credential slots; the value is sealed with AES-256-GCM, never stored in clear. */
export const secrets = pgTable(
  "secrets",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    type: text("type", { enum: ["git_secret", "registry_secret"] }).notNull(),
    /** The sealed SecretValue (binary protobuf): nonce, ciphertext and tag. */
    sealedValue: bytea("sealed_value").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/** Scripts of the script service: a name and the version threads run when they ask for 0. */
export const scripts = pgTable(
  "scripts",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    activeVersion: integer("active_version").notNull(),
    latestVersion: integer("latest_version").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/** Immutable script versions: the source as published and what was derived from it. */
export const scriptVersions = pgTable(
  "script_versions",
  {
    orgId: uuid("org_id").notNull(),
    scriptName: text("script_name").notNull(),
    version: integer("version").notNull(),
    source: text("source").notNull(),
    sourceSha256: text("source_sha256").notNull(),
    description: text("description").notNull().default(""),
    /** The contract's JSON Schemas, `{inputs, outputs}`. */
    contract: jsonb("contract").$type<{ inputs: Record<string, unknown>; outputs: Record<string, unknown> }>().notNull(),
    toolsRequired: text("tools_required").array().notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.scriptName, t.version] }),
    foreignKey({ columns: [t.orgId, t.scriptName], foreignColumns: [scripts.orgId, scripts.name] }).onDelete("cascade"),
  ],
);

export const schema = { organizations, apiKeys, permissions, envVars, scriptEnvVars, secrets, scripts, scriptVersions };

