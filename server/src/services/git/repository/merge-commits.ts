import { GitRepositoryError } from "./git-repository-error.js";
import { validateIdentity, type CommitIdentity } from "./commit-identity.js";
import { replayCommits } from "./replay-commits.js";
import { commitTree, mergeTrees } from "./tree-merge.js";
import { requireRef } from "./resolve-ref.js";

export type MergeMethod = "merge" | "squash" | "rebase";

export interface MergeOptions {
  /** The branch (or commit) merged into. */
  base: string;
  /** The branch (or commit) merged from. */
  head: string;
  method: MergeMethod;
  /** Author of the merge or squash commit; the committer of every replayed commit of a rebase. */
  author: CommitIdentity;
  /** Message of the merge or squash commit; a rebase keeps each commit's own message. */
  message: string;
}

export type MergeOutcome = { sha: string } | { conflicts: string[] };

/**
 * Builds the commit a merge of `head` into `base` would produce, entirely in the object store: no work
 * tree, no index, no ref moved (the caller moves the branch with `updateRef`, guarded by the old value).
 * - merge: a commit of the merged tree with parents base and head;
 * - squash: the same tree with base as its only parent;
 * - rebase: head's commits since the merge base (merge commits skipped) replayed one by one onto base,
 *   keeping their authors and messages.
 * A conflict answers the conflicted paths (sorted) and writes nothing that a ref points to.
 */
export async function mergeCommits(gitDir: string, options: MergeOptions): Promise<MergeOutcome> {
  if (!["merge", "squash", "rebase"].includes(options.method)) {
    throw new GitRepositoryError("invalid_argument", "method must be merge, squash or rebase", "method");
  }
  const author = validateIdentity(options.author, "author");
  if (options.method !== "rebase" && (typeof options.message !== "string" || options.message.trim() === "")) {
    throw new GitRepositoryError("invalid_argument", "message must not be empty", "message");
  }
  // Git would keep only the part before a NUL, silently.
  if (typeof options.message === "string" && options.message.includes("\0")) {
    throw new GitRepositoryError("invalid_argument", "message must not contain NUL", "message");
  }
  const [base, head] = await Promise.all([
    requireRef(gitDir, options.base, "base"),
    requireRef(gitDir, options.head, "head"),
  ]);
  if (options.method === "rebase") return replayCommits(gitDir, base.sha, head.sha, author);

  const merged = await mergeTrees(gitDir, base.sha, head.sha);
  if ("conflicts" in merged) return merged;
  const parents = options.method === "merge" ? [base.sha, head.sha] : [base.sha];
  return { sha: await commitTree(gitDir, merged.tree, parents, options.message, author, author) };
}
