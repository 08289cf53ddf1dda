import { runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { requireRef } from "./resolve-ref.js";
import { parseTreeEntryLines } from "./tree-entry-line.js";
import { validateRepoPath } from "./validate-repo-path.js";

export type TreeEntryKind = "dir" | "file" | "symlink" | "submodule";

/** The tree entry record; `size` is given for files and symlinks (the length of the link target). */
export interface TreeEntry {
  name: string;
  kind: TreeEntryKind;
  size?: number;
}

export interface TreeListing {
  ref: string;
  sha: string;
  path: string;
  entries: TreeEntry[];
}

export function entryKind(mode: string): TreeEntryKind {
  if (mode === "040000") return "dir";
  if (mode === "120000") return "symlink";
  if (mode === "160000") return "submodule";
  return "file";
}

/**
 * The entries of one directory at a ref: directories first, then everything else, each group in byte
 * order of the name (the order git itself stores, minus its trailing-slash rule for directories).
 * A path that is missing or not a directory is `not_found` naming `path`.
 */
export async function readTree(gitDir: string, options: { ref: string; path?: string }): Promise<TreeListing> {
  const path = validateRepoPath(options.path);
  const resolved = await requireRef(gitDir, options.ref);
  // Paths after the tree-ish are never read as options (ls-tree takes no `--`). A trailing slash
  // lists the directory's contents rather than the directory's own entry.
  const args = ["ls-tree", "-l", "-z", "--end-of-options", resolved.sha];
  if (path !== "") args.push(`${path}/`);
  const lines = parseTreeEntryLines(await runGitOk(gitDir, args));
  // Only the root of an empty repository's tree is empty; any other empty listing means "no such
  // directory". A submodule cannot be entered, so ls-tree lists the entry itself instead.
  if (path !== "" && (lines.length === 0 || lines.some((line) => line.path === path))) {
    throw new GitRepositoryError("not_found", `path ${JSON.stringify(path)} is not a directory at this ref`, "path");
  }
  const entries = lines.map((line): TreeEntry => {
    const kind = entryKind(line.mode);
    const name = line.path.slice(line.path.lastIndexOf("/") + 1);
    return line.size === undefined || kind === "dir" || kind === "submodule"
      ? { name, kind }
      : { name, kind, size: line.size };
  });
  entries.sort((a, b) => {
    if ((a.kind === "dir") !== (b.kind === "dir")) return a.kind === "dir" ? -1 : 1;
    return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
  });
  return { ref: resolved.ref, sha: resolved.sha, path, entries };
}
