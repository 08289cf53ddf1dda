import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { parseDiffFileList, type DiffFile } from "./diff-file-list.js";
import { requireRef } from "./resolve-ref.js";

export type { DiffFile } from "./diff-file-list.js";

/** Patch text returned when the caller gives no cap (all files together). */
export const DEFAULT_PATCH_MAX_BYTES = 1024 * 1024;
/** The largest patch cap a caller may ask for. */
export const MAX_PATCH_MAX_BYTES = 16 * 1024 * 1024;

export interface DiffResult {
  base_sha: string;
  head_sha: string;
  files: DiffFile[];
  total_additions: number;
  total_deletions: number;
  /** True when some files lost their patch to the size cap (their counts are always there). */
  truncated: boolean;
}

export interface DiffOptions {
  from: string;
  to: string;
  statsOnly?: boolean;
  maxPatchBytes?: number;
}

/**
 * What changed from commit `from` to commit `to` (the two trees compared directly, no merge base), with
 * renames detected. Each text file's `patch` holds its hunks (from the first `@@`; empty for a pure
 * rename); binary files have none. Patches are added in order until their total would pass the cap;
 * the remaining files keep their counts but no patch, and `truncated` is true.
 */
export async function diff(gitDir: string, options: DiffOptions): Promise<DiffResult> {
  const maxPatchBytes = patchCap(options.maxPatchBytes);
  const [base, head] = await Promise.all([
    requireRef(gitDir, options.from, "from"),
    requireRef(gitDir, options.to, "to"),
  ]);
  const common = ["-r", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "--end-of-options", base.sha, head.sha];
  const files = parseDiffFileList(await runGitOk(gitDir, ["diff-tree", "-z", "--raw", "--numstat", ...common]));
  let truncated = false;
  if (!options.statsOnly && files.some((file) => !file.binary)) {
    truncated = await attachPatches(gitDir, common, files, maxPatchBytes);
  }
  return {
    base_sha: base.sha,
    head_sha: head.sha,
    files,
    total_additions: files.reduce((sum, file) => sum + file.additions, 0),
    total_deletions: files.reduce((sum, file) => sum + file.deletions, 0),
    truncated,
  };
}

/** Fills `patch` on the files whose patch fits; answers whether any text file was left without one. */
async function attachPatches(
  gitDir: string,
  common: string[],
  files: DiffFile[],
  maxPatchBytes: number,
): Promise<boolean> {
  // Headers come on top of the hunks, so read a little more than the cap; past that git is stopped.
  const result = await runGit(gitDir, ["diff-tree", "-p", ...common], {
    maxOutputBytes: maxPatchBytes * 2 + 64 * 1024,
  });
  if (!result.truncated && result.exitCode !== 0) {
    throw new GitRepositoryError("failed", "git diff-tree failed", undefined, result.stderr.trim());
  }
  const sections = splitPatch(result.stdout);
  // A section cut by the output cap is incomplete; it and everything after get no patch.
  if (result.truncated) sections.pop();
  let used = 0;
  let truncated = false;
  files.forEach((file, index) => {
    if (file.binary) return;
    const section = sections[index];
    if (section === undefined || used + section.length > maxPatchBytes || truncated) {
      truncated = true;
      return;
    }
    used += section.length;
    file.patch = hunks(section).toString("utf8");
  });
  return truncated;
}

/** One section per file: `diff --git` at the start of a line never occurs inside a hunk. */
function splitPatch(patch: Buffer): Buffer[] {
  const marker = Buffer.from("diff --git ");
  const starts: number[] = [];
  for (let at = patch.indexOf(marker); at >= 0; at = patch.indexOf(marker, at + 1)) {
    if (at === 0 || patch[at - 1] === 0x0a) starts.push(at);
  }
  return starts.map((start, i) => patch.subarray(start, starts[i + 1] ?? patch.length));
}

function hunks(section: Buffer): Buffer {
  if (section.subarray(0, 3).toString() === "@@ ") return section;
  const at = section.indexOf("\n@@ ");
  return at < 0 ? Buffer.alloc(0) : section.subarray(at + 1);
}

function patchCap(maxPatchBytes: number | undefined): number {
  if (maxPatchBytes === undefined) return DEFAULT_PATCH_MAX_BYTES;
  if (!Number.isSafeInteger(maxPatchBytes) || maxPatchBytes < 1) {
    throw new GitRepositoryError("invalid_argument", "maxPatchBytes must be a positive integer", "maxPatchBytes");
  }
  return Math.min(maxPatchBytes, MAX_PATCH_MAX_BYTES);
}
