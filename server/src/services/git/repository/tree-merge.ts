import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { identityEnvironment, type CommitIdentity } from "./commit-identity.js";

/** `merge-tree --write-tree`: the merged tree, or the conflicted paths. */
export async function mergeTrees(
  gitDir: string,
  ours: string,
  theirs: string,
): Promise<{ tree: string } | { conflicts: string[] }> {
  const result = await runGit(gitDir, [
    "merge-tree",
    "--write-tree",
    "-z",
    "--name-only",
    "--no-messages",
    ours,
    theirs,
  ]);
  const [tree = "", ...paths] = result.stdout.toString("utf8").split("\0");
  if (result.exitCode === 0) return { tree };
  if (result.exitCode === 1) return { conflicts: [...new Set(paths.filter((path) => path !== ""))].sort() };
  if (/unrelated histories/.test(result.stderr)) {
    throw new GitRepositoryError("conflict", "base and head have no common history", "head");
  }
  throw new GitRepositoryError("failed", "git merge-tree failed", undefined, result.stderr.trim());
}

export async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  author: CommitIdentity & { rawDate?: string },
  committer: CommitIdentity,
): Promise<string> {
  const args = ["commit-tree", ...parents.flatMap((parent) => ["-p", parent]), "-F", "-", "--end-of-options", tree];
  const output = await runGitOk(gitDir, args, { input: message, env: identityEnvironment(author, committer) });
  return output.trim();
}
