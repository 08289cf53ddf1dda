import { and, asc, count, desc, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../../../db/database.js";
import { isUniqueViolation } from "../../../../db/sql-state.js";
import { uuidV7 } from "../../../actions/run-keys.js";
import type { ReviewState } from "./merge-gate.js";
import { gitPullRequestComments, gitPullRequestReviews, gitPullRequests } from "./git-pulls-schema.js";

export type PullRequestRow = typeof gitPullRequests.$inferSelect;
export type ReviewRow = typeof gitPullRequestReviews.$inferSelect;
export type CommentRow = typeof gitPullRequestComments.$inferSelect;
export type PullRequestState = PullRequestRow["state"];

/** Attempts at taking the next number when two pull requests are opened at once. */
const NUMBER_ATTEMPTS = 5;

/** Pull requests of one repository, with their reviews and comments. */
export function createPullRequestStore(db: Database) {
  const one = (repoId: string, number: number) =>
    and(eq(gitPullRequests.repoId, repoId), eq(gitPullRequests.number, number));

  return {
    async create(pull: {
      repoId: string;
      title: string;
      body: string;
      headBranch: string;
      baseBranch: string;
      author: string;
    }): Promise<PullRequestRow> {
      for (let attempt = 1; ; attempt++) {
        try {
          const [row] = await db
            .insert(gitPullRequests)
            .values({
              id: uuidV7(),
              ...pull,
              number: sql`(select coalesce(max(${gitPullRequests.number}), 0) + 1 from ${gitPullRequests} where ${gitPullRequests.repoId} = ${pull.repoId})`,
            })
            .returning();
          return row!;
        } catch (error) {
          // Another pull request took the number first: take the next one.
          if (!isUniqueViolation(error) || attempt >= NUMBER_ATTEMPTS) throw error;
        }
      }
    },

    async get(repoId: string, number: number): Promise<PullRequestRow | undefined> {
      const [row] = await db.select().from(gitPullRequests).where(one(repoId, number));
      return row;
    },

    /** Newest first; `state` filters unless `all`. */
    async list(repoId: string, state: PullRequestState | "all", limit: number, offset: number) {
      const where: SQL | undefined =
        state === "all"
          ? eq(gitPullRequests.repoId, repoId)
          : and(eq(gitPullRequests.repoId, repoId), eq(gitPullRequests.state, state));
      const [total] = await db.select({ n: count() }).from(gitPullRequests).where(where);
      const rows = await db
        .select()
        .from(gitPullRequests)
        .where(where)
        .orderBy(desc(gitPullRequests.number))
        .limit(limit)
        .offset(offset);
      return { rows, total: Number(total?.n ?? 0) };
    },

    /** Changes title, body or base; `state` closes or reopens (never from or to `merged`). */
    async update(
      repoId: string,
      number: number,
      change: { title?: string; body?: string; baseBranch?: string; state?: "open" | "closed" },
    ): Promise<PullRequestRow | undefined> {
      const [row] = await db
        .update(gitPullRequests)
        .set({
          ...change,
          ...(change.state === "closed" ? { closedAt: Date.now() } : {}),
          ...(change.state === "open" ? { closedAt: null } : {}),
          updatedAt: sql`greatest((extract(epoch from statement_timestamp()) * 1000)::bigint, ${gitPullRequests.updatedAt} + 1)`,
        })
        .where(and(one(repoId, number), sql`${gitPullRequests.state} <> 'merged'`))
        .returning();
      return row;
    },

    /** Records the merge of an open pull request; false when it was no longer open. */
    async markMerged(
      repoId: string,
      number: number,
      merge: { method: string; sha: string; headSha: string },
    ): Promise<boolean> {
      const now = Date.now();
      const rows = await db
        .update(gitPullRequests)
        .set({
          state: "merged",
          mergeMethod: merge.method,
          mergeCommitSha: merge.sha,
          mergedHeadSha: merge.headSha,
          mergedAt: now,
          closedAt: now,
          updatedAt: now,
        })
        .where(and(one(repoId, number), eq(gitPullRequests.state, "open")))
        .returning({ id: gitPullRequests.id });
      return rows.length > 0;
    },

    async addReview(review: {
      pullId: string;
      reviewer: string;
      state: ReviewState;
      commitSha: string;
      body: string;
    }): Promise<ReviewRow> {
      const [row] = await db
        .insert(gitPullRequestReviews)
        .values({ id: uuidV7(), ...review })
        .returning();
      return row!;
    },

    /** Oldest first, as the merge gate reads them. */
    listReviews(pullId: string): Promise<ReviewRow[]> {
      return db
        .select()
        .from(gitPullRequestReviews)
        .where(eq(gitPullRequestReviews.pullId, pullId))
        .orderBy(asc(gitPullRequestReviews.createdAt), asc(gitPullRequestReviews.id));
    },

    async addComment(comment: { pullId: string; author: string; body: string }): Promise<CommentRow> {
      const [row] = await db
        .insert(gitPullRequestComments)
        .values({ id: uuidV7(), ...comment })
        .returning();
      return row!;
    },

    listComments(pullId: string): Promise<CommentRow[]> {
      return db
        .select()
        .from(gitPullRequestComments)
        .where(eq(gitPullRequestComments.pullId, pullId))
        .orderBy(asc(gitPullRequestComments.createdAt), asc(gitPullRequestComments.id));
    },
  };
}

export type PullRequestStore = ReturnType<typeof createPullRequestStore>;
