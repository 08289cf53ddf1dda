import { runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { requireRef } from "./resolve-ref.js";
import { validateRepoPath } from "./validate-repo-path.js";

export const DEFAULT_COMMIT_LIMIT = 50;
export const MAX_COMMIT_LIMIT = 500;

/** The commit record; `time` is the author date in ISO 8601 (UTC). */
export interface CommitSummary {
  sha: string;
  author: string;
  email: string;
  time: string;
  subject: string;
  message: string;
}

export interface CommitListing {
  ref: string;
  sha: string;
  commits: CommitSummary[];
}

const FIELDS = ["%H", "%an", "%ae", "%aI", "%s", "%B"] as const;

/**
 * The history reachable from `ref`, newest first (commit date order, as `git log`), optionally only the
 * commits that touch `path`. `limit` defaults to 50 and is clamped to 500; anything but a positive
 * integer is `invalid_argument`.
 */
export async function listCommits(
  gitDir: string,
  options: { ref: string; limit?: number; path?: string },
): Promise<CommitListing> {
  const limit = commitLimit(options.limit);
  const path = validateRepoPath(options.path);
  const resolved = await requireRef(gitDir, options.ref);
  // Every field and every record ends with NUL (-z), which no author field or message can hold.
  const args = [
    "log",
    "-z",
    `--format=${FIELDS.join("%x00")}`,
    `--max-count=${limit}`,
    "--no-show-signature",
    resolved.sha,
  ];
  if (path !== "") args.push("--", path);
  const fields = (await runGitOk(gitDir, args)).split("\0");
  const commits: CommitSummary[] = [];
  for (let i = 0; i + FIELDS.length <= fields.length; i += FIELDS.length) {
    const [sha = "", author = "", email = "", time = "", subject = "", message = ""] = fields.slice(
      i,
      i + FIELDS.length,
    );
    commits.push({
      sha,
      author,
      email,
      time: new Date(time).toISOString(),
      subject,
      message: message.replace(/\n+$/, ""),
    });
  }
  return { ref: resolved.ref, sha: resolved.sha, commits };
}

function commitLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_COMMIT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new GitRepositoryError("invalid_argument", "limit must be a positive integer", "limit");
  }
  return Math.min(limit, MAX_COMMIT_LIMIT);
}
