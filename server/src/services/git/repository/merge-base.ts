import { runGit } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { requireRef } from "./resolve-ref.js";

/** The best common ancestor of two commits (refs or ids), or undefined when their histories are unrelated. */
export async function mergeBase(gitDir: string, a: string, b: string): Promise<string | undefined> {
  const [left, right] = await Promise.all([requireRef(gitDir, a, "base"), requireRef(gitDir, b, "head")]);
  const result = await runGit(gitDir, ["merge-base", "--end-of-options", left.sha, right.sha]);
  // Exit 1 with no output is git's way of saying "no common ancestor".
  if (result.exitCode === 1 && result.stdout.length === 0) return undefined;
  if (result.exitCode !== 0)
    throw new GitRepositoryError("failed", "git merge-base failed", undefined, result.stderr.trim());
  return result.stdout.toString("utf8").trim();
}
