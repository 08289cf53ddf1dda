import { index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../../../../db/column-types.js";
import { gitRepositories } from "../../git-schema.js";

/** Pull requests: a head branch proposed for a base branch of the same repository. */
export const gitPullRequests = pgTable(
  "git_pull_requests",
  {
    id: uuid("id").primaryKey(),
    repoId: uuid("repo_id")
      .notNull()
      .references(() => gitRepositories.id, { onDelete: "cascade" }),
    /** Per repository, from 1: the number in URLs. */
    number: integer("number").notNull(),
    title: text("title").notNull(),
    body: text("body").notNull().default(""),
    /** `open`, `closed` or `merged`. */
    state: text("state", { enum: ["open", "closed", "merged"] })
      .notNull()
      .default("open"),
    headBranch: text("head_branch").notNull(),
    baseBranch: text("base_branch").notNull(),
    /** The principal (API key id) that opened it. */
    author: text("author").notNull(),
    mergeMethod: text("merge_method"),
    mergeCommitSha: text("merge_commit_sha"),
    /** The head the merge took, for a merged pull request whose branch moved or went later. */
    mergedHeadSha: text("merged_head_sha"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
    closedAt: epochMs("closed_at"),
    mergedAt: epochMs("merged_at"),
  },
  (t) => [
    uniqueIndex("git_pull_requests_number").on(t.repoId, t.number),
    index("git_pull_requests_state").on(t.repoId, t.state, t.number),
  ],
);

/** Reviews, each pinned to the head commit it was given on. */
export const gitPullRequestReviews = pgTable(
  "git_pull_request_reviews",
  {
    id: uuid("id").primaryKey(),
    pullId: uuid("pull_id")
      .notNull()
      .references(() => gitPullRequests.id, { onDelete: "cascade" }),
    reviewer: text("reviewer").notNull(),
    /** `approve`, `request_changes` or `comment`. */
    state: text("state", { enum: ["approve", "request_changes", "comment"] }).notNull(),
    commitSha: text("commit_sha").notNull(),
    body: text("body").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [index("git_pull_request_reviews_pull").on(t.pullId, t.createdAt)],
);

export const gitPullRequestComments = pgTable(
  "git_pull_request_comments",
  {
    id: uuid("id").primaryKey(),
    pullId: uuid("pull_id")
      .notNull()
      .references(() => gitPullRequests.id, { onDelete: "cascade" }),
    author: text("author").notNull(),
    body: text("body").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [index("git_pull_request_comments_pull").on(t.pullId, t.createdAt)],
);
