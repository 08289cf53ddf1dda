import { sql } from "drizzle-orm";
import { bigint, index, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../../../../db/column-types.js";
import { organizations } from "../../../../auth/auth-schema.js";
import { gitRepositories } from "../../git-schema.js";
import { checkConclusions, checkStatuses } from "./check-rollup.js";

/** The tables of commit checks: one row per check run, its log as ordered text chunks. */

/**
 * A check run on one commit, written by CI through the control plane; rows go with their
 * repository.
 */
export const gitChecks = pgTable(
  "git_checks",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    repoId: uuid("repo_id")
      .notNull()
      .references(() => gitRepositories.id, { onDelete: "cascade" }),
    headSha: text("head_sha").notNull(),
    name: text("name").notNull(),
    status: text("status", { enum: checkStatuses }).notNull(),
    conclusion: text("conclusion", { enum: checkConclusions }),
    detailsUrl: text("details_url"),
    outputSummary: text("output_summary"),
    /** Bytes of log written so far: the offset the next chunk starts at. */
    logBytes: bigint("log_bytes", { mode: "number" }).notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
    completedAt: epochMs("completed_at"),
  },
  (t) => [index("git_checks_commit").on(t.repoId, t.headSha)],
);

/** Appended log text; `offset` is the chunk's first byte in the whole log, so readers resume by it. */
export const gitCheckLogChunks = pgTable(
  "git_check_log_chunks",
  {
    checkId: uuid("check_id")
      .notNull()
      .references(() => gitChecks.id, { onDelete: "cascade" }),
    offset: bigint("offset", { mode: "number" }).notNull(),
    text: text("text").notNull(),
  },
  (t) => [primaryKey({ columns: [t.checkId, t.offset] })],
);
