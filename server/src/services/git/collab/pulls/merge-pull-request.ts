import {
  GitRepositoryError,
  mergeCommits,
  requireRef,
  updateRef,
  type CommitIdentity,
  type MergeMethod,
} from "../../repository/index.js";

export interface MergePullRequestOptions {
  readonly baseBranch: string;
  readonly headBranch: string;
  readonly method: MergeMethod;
  /** The head the client reviewed; a moved head refuses the merge (GitHub's `sha` parameter). */
  readonly expectedHeadSha: string;
  /**
   * The base the caller evaluated the merge gate against, when it did: the branch then only moves
   * from exactly that commit, so what was checked is what is merged.
   */
  readonly expectedBaseSha?: string;
  readonly author: CommitIdentity;
  readonly message: string;
}

export type MergePullRequestOutcome =
  | { readonly kind: "merged"; readonly sha: string; readonly baseSha: string }
  | { readonly kind: "stale_head"; readonly headSha: string }
  | { readonly kind: "conflict"; readonly conflictingFiles: string[] }
  /** Another write moved the base branch first (a concurrent merge or push): nothing was changed. */
  | { readonly kind: "base_moved" };

/**
 * Merges a pull request's head branch into its base without a work tree: the merge, squash or
 * rebase result is built in the object store, then the base branch is moved by compare-and-swap
 * from the commit the merge was built on. Of two merges racing on one base exactly one moves it;
 * the other answers `base_moved` and leaves no ref changed.
 */
export async function mergePullRequest(
  gitDir: string,
  options: MergePullRequestOptions,
): Promise<MergePullRequestOutcome> {
  const baseRef = `refs/heads/${options.baseBranch}`;
  const head = await requireRef(gitDir, `refs/heads/${options.headBranch}`, "head");
  if (head.sha !== options.expectedHeadSha) return { kind: "stale_head", headSha: head.sha };
  const base = await requireRef(gitDir, baseRef, "base");
  if (options.expectedBaseSha !== undefined && base.sha !== options.expectedBaseSha) return { kind: "base_moved" };

  const outcome = await mergeCommits(gitDir, {
    base: base.sha,
    head: head.sha,
    method: options.method,
    author: options.author,
    message: options.message,
  });
  if ("conflicts" in outcome) return { kind: "conflict", conflictingFiles: outcome.conflicts };
  try {
    await updateRef(gitDir, baseRef, outcome.sha, base.sha);
  } catch (error) {
    if (error instanceof GitRepositoryError && error.kind === "conflict") return { kind: "base_moved" };
    throw error;
  }
  return { kind: "merged", sha: outcome.sha, baseSha: base.sha };
}
