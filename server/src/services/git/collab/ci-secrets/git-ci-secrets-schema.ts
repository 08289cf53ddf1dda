import { pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../../../../db/column-types.js";
import { organizations } from "../../../../auth/auth-schema.js";
import { gitRepositories } from "../../git-schema.js";

/**
 * Write-only CI secrets. `scope` is the scope key (empty, a repository id, or `repo_id/env`);
 * `repo_id` repeats the repository, so its secrets go with it.
 */
export const gitCiSecrets = pgTable(
  "git_ci_secrets",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    repoId: uuid("repo_id").references(() => gitRepositories.id, { onDelete: "cascade" }),
    environment: text("environment"),
    name: text("name").notNull(),
    /** Sealed by the platform's secret box: nonce, ciphertext and tag; never stored in clear. */
    sealedValue: bytea("sealed_value").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.scope, t.name] })],
);
