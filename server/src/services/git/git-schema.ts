import { bigint, boolean, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/**
 * The tables of the git gateway. The repository's content is a bare repository on disk at
 * `<dataDir>/git/<org_id>/<repo_id>.git`; these rows say who owns it, who may see it, its quotas and
 * the size accounting refreshed after each push.
 */

/** One hosted repository. `id` is a UUIDv7, the `repo_id` of the wire address. */
export const gitRepositories = pgTable(
  "git_repositories",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** `private` or `public` (anonymous read). */
    visibility: text("visibility").notNull().default("private"),
    defaultBranch: text("default_branch").notNull().default("main"),
    /** Quotas: null means none. */
    sizeLimitBytes: bigint("size_limit_bytes", { mode: "number" }),
    packCountLimit: integer("pack_count_limit"),
    /** Accounting from `git count-objects -v`, refreshed after each accepted push. */
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull().default(0),
    packCount: integer("pack_count").notNull().default(0),
    lfsBytes: bigint("lfs_bytes", { mode: "number" }).notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [uniqueIndex("git_repositories_org_name").on(t.orgId, t.name)],
);

/** Branch protection: one rule per glob pattern (`*` within a segment, `**` across `/`). */
export const gitProtectionRules = pgTable(
  "git_protection_rules",
  {
    repoId: uuid("repo_id")
      .notNull()
      .references(() => gitRepositories.id, { onDelete: "cascade" }),
    branchPattern: text("branch_pattern").notNull(),
    requiredApprovals: integer("required_approvals").notNull().default(0),
    requireGreenChecks: boolean("require_green_checks").notNull().default(false),
    blockForcePush: boolean("block_force_push").notNull().default(false),
    blockDeletion: boolean("block_deletion").notNull().default(false),
    blockSelfApproval: boolean("block_self_approval").notNull().default(false),
    dismissStaleApprovals: boolean("dismiss_stale_approvals").notNull().default(false),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [uniqueIndex("git_protection_rules_repo_pattern").on(t.repoId, t.branchPattern)],
);

/**
 * SSH public keys. The owner is the principal that uploaded it: the API key id until users of the
 * organization have principals of their own.
 */
export const gitSshKeys = pgTable(
  "git_ssh_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    ownerPrincipal: text("owner_principal").notNull(),
    name: text("name").notNull(),
    /** `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`, … */
    keyType: text("key_type").notNull(),
    /** `SHA256:<base64 without padding>` of the key blob. */
    fingerprint: text("fingerprint").notNull(),
    publicKey: text("public_key").notNull(),
    readOnly: boolean("read_only").notNull().default(false),
    lastUsedAt: epochMs("last_used_at"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [uniqueIndex("git_ssh_keys_fingerprint").on(t.fingerprint)],
);
