import { runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import type { CommitIdentity } from "./commit-identity.js";
import type { MergeOutcome } from "./merge-commits.js";
import { commitTree, mergeTrees } from "./tree-merge.js";

/** A rebase replays at most this many commits; more is refused rather than run for minutes. */
export const MAX_REBASE_COMMITS = 250;

interface Replayed {
  sha: string;
  firstParent: string | undefined;
  author: CommitIdentity & { rawDate: string };
  message: string;
}

const FIELDS = ["%H", "%P", "%an", "%ae", "%ad", "%B"] as const;

/**
 * Replays head's non-merge commits since the merge base onto base, oldest first, keeping each one's
 * author, author date and message, with `committer` as committer. A commit whose change base already has
 * is dropped, as `git rebase` does.
 *
 * `merge-tree --merge-base` (a cherry-pick without a work tree) is not in every git we run on (2.40+),
 * so each step merges two scratch commits whose only common ancestor is a parentless commit of the
 * original parent's tree: the three-way merge then has exactly the base a cherry-pick uses. The scratch
 * commits are unreachable and go with the next gc.
 */
export async function replayCommits(
  gitDir: string,
  base: string,
  head: string,
  committer: CommitIdentity,
): Promise<MergeOutcome> {
  const commits = await commitsToReplay(gitDir, base, head);
  const scratch: CommitIdentity = { name: "merge", email: "merge@localhost", time: new Date(0) };
  let current = base;
  let currentTree = (await runGitOk(gitDir, ["rev-parse", "--verify", "--end-of-options", `${base}^{tree}`])).trim();
  let emptyTree: string | undefined;
  for (const commit of commits) {
    let parentTree: string;
    if (commit.firstParent !== undefined) parentTree = `${commit.firstParent}^{tree}`;
    else parentTree = emptyTree ??= (await runGitOk(gitDir, ["hash-object", "-t", "tree", "-w", "--stdin"])).trim();
    const pivot = await commitTree(gitDir, parentTree, [], "pivot", scratch, scratch);
    const [ours, theirs] = await Promise.all([
      commitTree(gitDir, currentTree, [pivot], "ours", scratch, scratch),
      commitTree(gitDir, `${commit.sha}^{tree}`, [pivot], "theirs", scratch, scratch),
    ]);
    const merged = await mergeTrees(gitDir, ours, theirs);
    if ("conflicts" in merged) return merged;
    if (merged.tree === currentTree) continue;
    current = await commitTree(gitDir, merged.tree, [current], commit.message, commit.author, committer);
    currentTree = merged.tree;
  }
  return { sha: current };
}

/** Head's commits not in base, oldest first, merge commits left out, read with one `git log`. */
async function commitsToReplay(gitDir: string, base: string, head: string): Promise<Replayed[]> {
  const output = await runGitOk(gitDir, [
    "log",
    "-z",
    "--reverse",
    "--topo-order",
    "--no-merges",
    "--date=raw",
    `--format=${FIELDS.join("%x00")}`,
    `--max-count=${MAX_REBASE_COMMITS + 1}`,
    head,
    "--not",
    base,
  ]);
  const fields = output.split("\0");
  const commits: Replayed[] = [];
  for (let i = 0; i + FIELDS.length <= fields.length; i += FIELDS.length) {
    const [sha = "", parents = "", name = "", email = "", rawDate = "", message = ""] = fields.slice(
      i,
      i + FIELDS.length,
    );
    const firstParent = parents.split(" ")[0] || undefined;
    commits.push({ sha, firstParent, author: { name, email, rawDate }, message });
  }
  if (commits.length > MAX_REBASE_COMMITS) {
    throw new GitRepositoryError("invalid_argument", `a rebase replays at most ${MAX_REBASE_COMMITS} commits`, "head");
  }
  return commits;
}
