import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { identityEnvironment, validateIdentity, type CommitIdentity } from "./commit-identity.js";
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
  const [base, head] = await Promise.all([
    requireRef(gitDir, options.base, "base"),
    requireRef(gitDir, options.head, "head"),
  ]);
  if (options.method === "rebase") return rebase(gitDir, base.sha, head.sha, author);

  const merged = await mergeTrees(gitDir, base.sha, head.sha);
  if ("conflicts" in merged) return merged;
  const parents = options.method === "merge" ? [base.sha, head.sha] : [base.sha];
  return { sha: await commitTree(gitDir, merged.tree, parents, options.message, author, author) };
}

/** `merge-tree --write-tree`: the merged tree, or the conflicted paths. */
async function mergeTrees(
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

async function commitTree(
  gitDir: string,
  tree: string,
  parents: string[],
  message: string,
  author: CommitIdentity,
  committer: CommitIdentity,
): Promise<string> {
  const args = ["commit-tree", ...parents.flatMap((parent) => ["-p", parent]), "-F", "-", "--end-of-options", tree];
  const output = await runGitOk(gitDir, args, { input: message, env: identityEnvironment(author, committer) });
  return output.trim();
}

/** The empty tree's id for this repository's hash function. */
async function emptyTree(gitDir: string): Promise<string> {
  return (await runGitOk(gitDir, ["hash-object", "-t", "tree", "-w", "--stdin"])).trim();
}

/**
 * Replays head's commits onto base. `merge-tree --merge-base` (a cherry-pick without a work tree) is not
 * in every git we run on, so each step merges two throw-away commits whose only common ancestor is a
 * parentless commit of the original parent's tree: the three-way merge then has exactly the base a
 * cherry-pick uses. The throw-away commits are unreachable and go with the next gc.
 */
async function rebase(gitDir: string, base: string, head: string, committer: CommitIdentity): Promise<MergeOutcome> {
  const list = await runGitOk(gitDir, ["rev-list", "--reverse", "--topo-order", "--no-merges", head, "--not", base]);
  const scratch: CommitIdentity = { name: "merge", email: "merge@localhost", time: new Date(0) };
  let current = base;
  for (const commit of list.split("\n").filter((line) => line !== "")) {
    const info = await commitInfo(gitDir, commit);
    const parentTree = info.parentTree ?? (await emptyTree(gitDir));
    const pivot = await commitTree(gitDir, parentTree, [], "pivot", scratch, scratch);
    const [ours, theirs] = await Promise.all([
      commitTree(gitDir, `${current}^{tree}`, [pivot], "ours", scratch, scratch),
      commitTree(gitDir, `${commit}^{tree}`, [pivot], "theirs", scratch, scratch),
    ]);
    const merged = await mergeTrees(gitDir, ours, theirs);
    if ("conflicts" in merged) return merged;
    current = await commitTree(gitDir, merged.tree, [current], info.message, info.author, committer);
  }
  return { sha: current };
}

async function commitInfo(
  gitDir: string,
  commit: string,
): Promise<{ parentTree: string | undefined; author: CommitIdentity; message: string }> {
  const output = await runGitOk(gitDir, [
    "log",
    "-1",
    "-z",
    "--format=%P%x00%an%x00%ae%x00%at%x00%B",
    "--end-of-options",
    commit,
  ]);
  const [parents = "", name = "", email = "", time = "0", ...rest] = output.split("\0");
  const firstParent = parents.split(" ")[0] ?? "";
  const parentTree =
    firstParent === ""
      ? undefined
      : (await runGitOk(gitDir, ["rev-parse", "--verify", "--end-of-options", `${firstParent}^{tree}`])).trim();
  return {
    parentTree,
    author: { name, email, time: new Date(Number(time) * 1000) },
    message: rest.join("\0").replace(/\0$/, ""),
  };
}
