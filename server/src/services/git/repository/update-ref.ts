import { runGit } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { validateRefName } from "./validate-ref-name.js";

const FULL_OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Moves `ref` (a full name under `refs/`) to `newSha`, only if it still points to `expectedOldSha`
 * (`null`: only if it does not exist yet). Git compares and swaps under the ref's lock, so two merges
 * racing on one branch cannot both win: the loser gets `conflict`. `newSha` must name an existing commit.
 */
export async function updateRef(
  gitDir: string,
  ref: string,
  newSha: string,
  expectedOldSha: string | null,
): Promise<void> {
  validateRefName(ref, "ref");
  if (!ref.startsWith("refs/"))
    throw new GitRepositoryError("invalid_argument", "ref must be a full name under refs/", "ref");
  if (!FULL_OBJECT_ID.test(newSha))
    throw new GitRepositoryError("invalid_argument", "newSha must be a full object id", "newSha");
  if (expectedOldSha !== null && !FULL_OBJECT_ID.test(expectedOldSha)) {
    throw new GitRepositoryError("invalid_argument", "expectedOldSha must be a full object id", "expectedOldSha");
  }
  const exists = await runGit(gitDir, ["cat-file", "-e", "--end-of-options", `${newSha}^{commit}`]);
  if (exists.exitCode !== 0)
    throw new GitRepositoryError("not_found", "newSha is not a commit of this repository", "newSha");
  // An all-zero old value is git's "must not exist yet".
  const oldValue = expectedOldSha ?? "0".repeat(newSha.length);
  const result = await runGit(gitDir, ["update-ref", "--no-deref", "--end-of-options", ref, newSha, oldValue]);
  if (result.exitCode !== 0) {
    // Every refusal left at this point is about the ref's current state: moved, created, or locked by a
    // concurrent update.
    throw new GitRepositoryError(
      "conflict",
      `${ref} does not point to the expected commit`,
      "expectedOldSha",
      result.stderr.trim(),
    );
  }
}
