import { GitRepositoryError } from "./git-repository-error.js";

/** Longer paths are refused before git sees them (git itself allows up to PATH_MAX on most systems). */
export const MAX_REPO_PATH_LENGTH = 4096;

/**
 * Checks and normalises a path inside a repository's tree: `/`-separated, relative to the root.
 * Empty segments and `.` are dropped (`a//b/./c/` is `a/b/c`); a leading `/`, a `..` segment and NUL
 * are refused with `invalid_argument` naming `field`. The empty string names the root.
 */
export function validateRepoPath(path: string | undefined, field = "path"): string {
  if (path === undefined) return "";
  const refuse = (why: string): never => {
    throw new GitRepositoryError("invalid_argument", `${field} ${why}`, field);
  };
  if (typeof path !== "string") refuse("must be a string");
  if (path.length > MAX_REPO_PATH_LENGTH) refuse(`must be at most ${MAX_REPO_PATH_LENGTH} characters`);
  if (path.includes("\u0000")) refuse("must not contain NUL");
  if (path.startsWith("/")) refuse("must be relative to the repository root (no leading /)");
  const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
  if (segments.includes("..")) refuse("must not contain .. segments");
  return segments.join("/");
}
