import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { isObjectId, validateRefName } from "./validate-ref-name.js";

/** The ref record: `ref` is fully qualified when the input named a ref, the full commit id otherwise. */
export interface ResolvedRef {
  ref: string;
  sha: string;
}

/**
 * Resolves a full ref (`refs/heads/main`), a short branch or tag name (`main`, `v1`; a branch wins over
 * a tag of the same name) or a full or abbreviated commit id to a commit. Tags are peeled to their commit.
 * Answers undefined when nothing matches (an unborn or missing branch, an unknown or ambiguous id).
 * Throws `invalid_argument` for a malformed name.
 */
export async function resolveRef(gitDir: string, ref: string, field = "ref"): Promise<ResolvedRef | undefined> {
  validateRefName(ref, field);
  const fullName = await findRefName(gitDir, ref);
  if (fullName !== undefined) {
    const sha = await peelToCommit(gitDir, fullName);
    return sha === undefined ? undefined : { ref: fullName, sha };
  }
  if (!isObjectId(ref)) return undefined;
  const sha = await peelToCommit(gitDir, ref);
  return sha === undefined ? undefined : { ref: sha, sha };
}

/** Like {@link resolveRef}, but a missing ref is `not_found` naming the field. */
export async function requireRef(gitDir: string, ref: string, field = "ref"): Promise<ResolvedRef> {
  const resolved = await resolveRef(gitDir, ref, field);
  if (resolved === undefined)
    throw new GitRepositoryError("not_found", `${field} ${JSON.stringify(ref)} not found`, field);
  return resolved;
}

/** The full name of the ref `name` designates, if one exists: itself when full, else a branch, else a tag. */
async function findRefName(gitDir: string, name: string): Promise<string | undefined> {
  const candidates = name.startsWith("refs/") ? [name] : [`refs/heads/${name}`, `refs/tags/${name}`];
  // for-each-ref patterns also match refs below a name, hence the exact comparison afterwards.
  const output = await runGitOk(gitDir, ["for-each-ref", "--format=%(refname)", ...candidates]);
  const existing = new Set(output.split("\n").filter((line) => line !== ""));
  return candidates.find((candidate) => existing.has(candidate));
}

/** The commit `revision` peels to, or undefined (missing, ambiguous, or not a commit). */
async function peelToCommit(gitDir: string, revision: string): Promise<string | undefined> {
  const result = await runGit(gitDir, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${revision}^{commit}`]);
  if (result.exitCode !== 0) return undefined;
  const sha = result.stdout.toString("utf8").trim();
  return sha === "" ? undefined : sha;
}
