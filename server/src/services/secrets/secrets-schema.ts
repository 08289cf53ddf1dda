import { pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/** The tables of the secrets service. */

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
