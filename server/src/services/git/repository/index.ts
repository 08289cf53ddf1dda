// The library the git control plane calls: reads and merges on a bare repository, by plumbing only.
export { GitRepositoryError, type GitRepositoryErrorKind } from "./git-repository-error.js";
export { runGit, runGitOk, type GitCommandOptions, type GitCommandResult } from "./git-command.js";
export { validateRefName, isObjectId } from "./validate-ref-name.js";
export { validateRepoPath } from "./validate-repo-path.js";
export { listBranches, type Branch } from "./list-branches.js";
export { resolveRef, requireRef, type ResolvedRef } from "./resolve-ref.js";
export { readTree, type TreeEntry, type TreeEntryKind, type TreeListing } from "./read-tree.js";
export { readBlob, type BlobContent, DEFAULT_BLOB_MAX_BYTES, MAX_BLOB_MAX_BYTES } from "./read-blob.js";
export {
  listCommits,
  type CommitSummary,
  type CommitListing,
  DEFAULT_COMMIT_LIMIT,
  MAX_COMMIT_LIMIT,
} from "./list-commits.js";
export {
  diff,
  type DiffFile,
  type DiffOptions,
  type DiffResult,
  DEFAULT_PATCH_MAX_BYTES,
  MAX_PATCH_MAX_BYTES,
} from "./diff-commits.js";
export { repositorySize, type RepositorySize } from "./repository-size.js";
export { mergeBase } from "./merge-base.js";
export { mergeCommits, type MergeMethod, type MergeOptions, type MergeOutcome } from "./merge-commits.js";
export { updateRef } from "./update-ref.js";
export type { CommitIdentity } from "./commit-identity.js";
