import { boolean, index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../db/column-types.js";

/**
 * The organizations and their API keys, which every service's tables hang from: every row of tenant
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
    state: text("state", { enum: ["active", "revoked"] }).notNull().default("active"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    expiresAt: epochMs("expires_at").notNull().default(0),
    lastUsedAt: epochMs("last_used_at").notNull().default(0),
    rotatedAt: epochMs("rotated_at").notNull().default(0),
    revokedAt: epochMs("revoked_at").notNull().default(0),
  },
  (t) => [index("api_keys_org_idx").on(t.orgId, t.createdAt)],
);
