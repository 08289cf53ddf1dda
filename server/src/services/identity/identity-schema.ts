import { sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  boolean,
  customType,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/**
 * The tables of the identity pools service. Every row carries `org_id` and `pool_id`, and every
 * table but the pools references the pair `(org_id, pool_id)` with a cascading foreign key: a row
 * can never sit in another organization than its pool, and deleting a pool removes all it held.
 *
 * Rows that belong to a user (sessions, memberships, codes, e-mail tokens) hold `user_id` without a
 * foreign key to `identity_users`: a pool's users may live in another store (a pool re-pointed at
 * its own database), and the platform-side rows must survive that move.
 */

export type JsonObject = Record<string, unknown>;
export type PoolState = "active" | "migrating" | "migration_failed";
export type PoolKeyState = "active" | "retired";
export type EmailTokenPurpose = "verify" | "reset" | "invite";
/** `logged`: no SMTP server is configured, so the message went to the log instead. */
/** `requested`: asked for by address, recipient and content not yet decided (see mail-outbox.ts). */
export type MailStatus = "requested" | "pending" | "sent" | "logged" | "failed";

/** Where a pool's users live, as shown to administrators: never a credential. */
export interface UserStoreDescription {
  readonly kind: "managed" | "postgres" | "k3";
  readonly host?: string;
  readonly bucket?: string;
  readonly serviceAccount?: string;
}

export type MigrationPhase = "warm_copy" | "locked_delta" | "verifying" | "cutover" | "purging" | "done" | "failed";

/**
 * A pool's user-store migration as administrators see it (GET /pools/{pool}): set while one runs
 * and after one failed, null otherwise. Times are epoch ms. The job's own bookkeeping (cursor,
 * lease, sealed addresses) lives in `identity_user_store_migrations`.
 */
export interface PoolMigration {
  readonly phase: MigrationPhase;
  readonly usersTotal: number;
  readonly usersCopied: number;
  readonly target: UserStoreDescription;
  readonly keepSource: boolean;
  readonly startedAt: number;
  readonly updatedAt: number;
  /** Why it failed; in `failed` only. */
  readonly error?: string;
}

/** The public half of an Ed25519 key as a JWK (RFC 8037). */
export interface PublicOkpJwk {
  readonly kty: "OKP";
  readonly crv: "Ed25519";
  readonly x: string;
}

const emptyObject = sql`'{}'::jsonb`;

/**
 * Text compared byte by byte whatever the database's collation: a prefix (`LIKE 'ab%'`) then reads
 * one index range, and list order is the same on every server.
 */
const byteText = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' });
const emptyTextArray = sql`'{}'::text[]`;

export const identityPools = pgTable(
  "identity_pools",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The issuer path segment: immutable. */
    name: text("name").notNull(),
    displayName: text("display_name").notNull().default(""),
    state: text("state").$type<PoolState>().notNull().default("active"),
    policies: jsonb("policies").$type<JsonObject>().notNull().default(emptyObject),
    settings: jsonb("settings").$type<JsonObject>().notNull().default(emptyObject),
    branding: jsonb("branding").$type<JsonObject>().notNull().default(emptyObject),
    /** Role name to permissions; the shape is described in role-catalog.ts. */
    roleCatalog: jsonb("role_catalog").$type<JsonObject>().notNull().default(emptyObject),
    userStore: jsonb("user_store")
      .$type<UserStoreDescription>()
      .notNull()
      .default(sql`'{"kind":"managed"}'::jsonb`),
    /** The user store's connection URL, sealed (it may hold a password); null for the managed store. */
    sealedUserStoreUrl: bytea("sealed_user_store_url"),
    migration: jsonb("migration").$type<PoolMigration>(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    unique("identity_pools_name_unique").on(t.orgId, t.name),
    unique("identity_pools_scope_unique").on(t.orgId, t.id),
  ],
);

/** Fresh `org_id`/`pool_id` columns: drizzle column builders cannot be shared between tables. */
function poolColumns() {
  return { orgId: uuid("org_id").notNull(), poolId: uuid("pool_id").notNull() };
}

function poolForeignKey(name: string, t: { orgId: AnyPgColumn; poolId: AnyPgColumn }) {
  return foreignKey({
    name,
    columns: [t.orgId, t.poolId],
    foreignColumns: [identityPools.orgId, identityPools.id],
  }).onDelete("cascade");
}

/**
 * A pool's signing keys. One is active (signs); retired keys stay published in the JWKS so tokens
 * they signed keep verifying. The private key is sealed with the server's secret box.
 */
export const identityPoolKeys = pgTable(
  "identity_pool_keys",
  {
    ...poolColumns(),
    /** RFC 7638 thumbprint of the public key. */
    kid: text("kid").notNull(),
    publicJwk: jsonb("public_jwk").$type<PublicOkpJwk>().notNull(),
    sealedPrivateKey: bytea("sealed_private_key").notNull(),
    state: text("state").$type<PoolKeyState>().notNull().default("active"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    retiredAt: epochMs("retired_at").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.poolId, t.kid] }),
    poolForeignKey("identity_pool_keys_pool_fk", t),
    // Two replicas creating or rotating at once cannot leave a pool with two signing keys.
    uniqueIndex("identity_pool_keys_one_active")
      .on(t.poolId)
      .where(sql`state = 'active'`),
  ],
);

/** Sign-in connections, one per kind; only `local` activates a sign-in method today. */
export const identityConnections = pgTable(
  "identity_connections",
  {
    ...poolColumns(),
    kind: text("kind").notNull(),
    config: jsonb("config").$type<JsonObject>().notNull().default(emptyObject),
    enabled: boolean("enabled").notNull().default(true),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.poolId, t.kind] }), poolForeignKey("identity_connections_pool_fk", t)],
);

/** The managed user store. */
export const identityUsers = pgTable(
  "identity_users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ...poolColumns(),
    /** As the user wrote it. */
    email: text("email").notNull(),
    /** Trimmed and lower-cased: what uniqueness, lookup, the prefix filter and the list order use. */
    emailNormalized: byteText("email_normalized").notNull(),
    emailVerified: boolean("email_verified").notNull().default(false),
    /** PHC string (argon2id); null until the user sets a password (invited users). */
    passwordHash: text("password_hash"),
    appRoles: text("app_roles").array().notNull().default(emptyTextArray),
    banned: boolean("banned").notNull().default(false),
    /** Soft delete: hidden from sign-in and lists, recoverable; 0 while live. */
    deletedAt: epochMs("deleted_at").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    poolForeignKey("identity_users_pool_fk", t),
    // A soft-deleted account does not hold its address: the person may sign up again.
    uniqueIndex("identity_users_email_unique")
      .on(t.poolId, t.emailNormalized)
      .where(sql`deleted_at = 0`),
    index("identity_users_list_idx").on(t.poolId, t.emailNormalized, t.id),
  ],
);

export const identityTenants = pgTable(
  "identity_tenants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ...poolColumns(),
    /** 1 to 63 characters of [a-z0-9-], immutable. */
    slug: text("slug").notNull(),
    displayName: text("display_name").notNull().default(""),
    metadata: jsonb("metadata").$type<JsonObject>().notNull().default(emptyObject),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [unique("identity_tenants_slug_unique").on(t.poolId, t.slug), poolForeignKey("identity_tenants_pool_fk", t)],
);

export const identityMemberships = pgTable(
  "identity_memberships",
  {
    ...poolColumns(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => identityTenants.id, { onDelete: "cascade" }),
    userId: uuid("user_id").notNull(),
    roles: text("roles").array().notNull().default(emptyTextArray),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.userId] }),
    poolForeignKey("identity_memberships_pool_fk", t),
    index("identity_memberships_user_idx").on(t.poolId, t.userId),
  ],
);

/** A session: the chain of refresh tokens that descends from one sign-in, revoked as a unit. */
export const identityRefreshFamilies = pgTable(
  "identity_refresh_families",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ...poolColumns(),
    userId: uuid("user_id").notNull(),
    /** The client of the code flow; "" for the password grant. */
    clientId: text("client_id").notNull().default(""),
    /** The tenant slug the session's tokens are pinned to; "" for none. */
    tenant: text("tenant").notNull().default(""),
    scope: text("scope").notNull().default(""),
    /** When the user authenticated (OIDC `auth_time`), epoch ms. */
    authTime: epochMs("auth_time").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    lastUsedAt: epochMs("last_used_at").notNull().default(nowMs),
    revokedAt: epochMs("revoked_at").notNull().default(0),
    /** Why: `logout`, `reuse`, `code_replay`, `user_revoked`, `password_changed`, `user_deleted`. */
    revokedReason: text("revoked_reason").notNull().default(""),
  },
  (t) => [
    poolForeignKey("identity_refresh_families_pool_fk", t),
    index("identity_refresh_families_user_idx").on(t.poolId, t.userId),
  ],
);

export const identityRefreshTokens = pgTable(
  "identity_refresh_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ...poolColumns(),
    familyId: uuid("family_id")
      .notNull()
      .references(() => identityRefreshFamilies.id, { onDelete: "cascade" }),
    /** SHA-256 of the token, base64url: the token itself is never stored in clear. */
    tokenHash: text("token_hash").notNull().unique(),
    /** The token this one was rotated into (whose value is derived from this one's, see refresh-families.ts). */
    successorId: uuid("successor_id"),
    rotatedAt: epochMs("rotated_at").notNull().default(0),
    expiresAt: epochMs("expires_at").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    poolForeignKey("identity_refresh_tokens_pool_fk", t),
    index("identity_refresh_tokens_family_idx").on(t.familyId),
  ],
);

/** Codes of the authorization-code flow: single use, short-lived, bound to client, redirect and PKCE. */
export const identityAuthorizationCodes = pgTable(
  "identity_authorization_codes",
  {
    /** SHA-256 of the code, base64url. */
    codeHash: text("code_hash").primaryKey(),
    ...poolColumns(),
    userId: uuid("user_id").notNull(),
    clientId: text("client_id").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    scope: text("scope").notNull().default(""),
    nonce: text("nonce").notNull().default(""),
    tenant: text("tenant").notNull().default(""),
    authTime: epochMs("auth_time").notNull(),
    expiresAt: epochMs("expires_at").notNull(),
    consumedAt: epochMs("consumed_at").notNull().default(0),
    /** The session the exchange started: a replayed code revokes it. */
    familyId: uuid("family_id"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [poolForeignKey("identity_authorization_codes_pool_fk", t)],
);

/** An authorization request waiting for the user to sign in on the hosted page. */
export const identityLoginTransactions = pgTable(
  "identity_login_transactions",
  {
    /** Random, base64url: the handle the hosted login page carries. */
    id: text("id").primaryKey(),
    ...poolColumns(),
    clientId: text("client_id").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    state: text("state").notNull().default(""),
    codeChallenge: text("code_challenge").notNull(),
    scope: text("scope").notNull().default(""),
    nonce: text("nonce").notNull().default(""),
    tenant: text("tenant").notNull().default(""),
    expiresAt: epochMs("expires_at").notNull(),
    completedAt: epochMs("completed_at").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [poolForeignKey("identity_login_transactions_pool_fk", t)],
);

/** Single-use tokens of e-mailed links: verification, password reset, invitation. */
export const identityEmailTokens = pgTable(
  "identity_email_tokens",
  {
    /** SHA-256 of the token, base64url. */
    tokenHash: text("token_hash").primaryKey(),
    ...poolColumns(),
    userId: uuid("user_id").notNull(),
    purpose: text("purpose").$type<EmailTokenPurpose>().notNull(),
    expiresAt: epochMs("expires_at").notNull(),
    consumedAt: epochMs("consumed_at").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    poolForeignKey("identity_email_tokens_pool_fk", t),
    index("identity_email_tokens_user_idx").on(t.poolId, t.userId, t.purpose),
  ],
);

/**
 * E-mails waiting to be sent, written in the transaction that decided to send them. The body holds
 * a live link, so it is sealed like a secret.
 */
export const identityMailOutbox = pgTable(
  "identity_mail_outbox",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    ...poolColumns(),
    recipient: text("recipient").notNull(),
    purpose: text("purpose").$type<EmailTokenPurpose>().notNull(),
    subject: text("subject").notNull(),
    /** The sealed JSON `{text, link}`. */
    sealedBody: bytea("sealed_body").notNull(),
    status: text("status").$type<MailStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: epochMs("next_attempt_at").notNull().default(0),
    /** A sender's claim, so two processes never send the same attempt. */
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    lastError: text("last_error").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    sentAt: epochMs("sent_at").notNull().default(0),
  },
  (t) => [
    poolForeignKey("identity_mail_outbox_pool_fk", t),
    index("identity_mail_outbox_due_idx").on(t.status, t.nextAttemptAt),
  ],
);

/**
 * Fixed-window counters of the issuer's rate limits. Kept in the database so that every server
 * process on it counts against the same budget; a row outlives its window only until a sweep.
 */
export const identityRateLimits = pgTable(
  "identity_rate_limits",
  {
    /** Pool, budget, what is counted (a client IP or a hashed e-mail address) and the window's start. */
    key: text("key").primaryKey(),
    hits: integer("hits").notNull().default(0),
    expiresAt: epochMs("expires_at").notNull(),
  },
  (t) => [index("identity_rate_limits_expiry_idx").on(t.expiresAt)],
);

/**
 * The running part of a user-store migration, one row per pool while the job has work left
 * (copying, or discarding the target's copy after an abort or a failure). A process works on it
 * only while it holds the lease, so several server processes can share the job.
 */
export const identityUserStoreMigrations = pgTable(
  "identity_user_store_migrations",
  {
    poolId: uuid("pool_id").primaryKey(),
    orgId: uuid("org_id").notNull(),
    /** `running` follows the pool's `migration.phase`; `discarding` erases the target's copy. */
    state: text("state").$type<"running" | "discarding">().notNull().default("running"),
    source: jsonb("source").$type<UserStoreDescription>().notNull(),
    /** Sealed connection URLs; null for the managed store. */
    sealedSourceUrl: bytea("sealed_source_url"),
    sealedTargetUrl: bytea("sealed_target_url"),
    /** The source's clock when the warm copy began: rows changed since are copied again while locked. */
    watermark: epochMs("watermark").notNull(),
    /** The last user id the warm copy wrote (ids are copied in order). */
    cursor: text("cursor").notNull().default(""),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    poolForeignKey("identity_user_store_migrations_pool_fk", t),
    index("identity_user_store_migrations_lease_idx").on(t.leaseExpiresAt),
  ],
);

export const identitySchema = {
  identityPools,
  identityPoolKeys,
  identityConnections,
  identityUsers,
  identityTenants,
  identityMemberships,
  identityRefreshFamilies,
  identityRefreshTokens,
  identityAuthorizationCodes,
  identityLoginTransactions,
  identityEmailTokens,
  identityMailOutbox,
  identityRateLimits,
  identityUserStoreMigrations,
};
