import { index, pgTable, text, unique, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/** The tables of the IAM service. */

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
