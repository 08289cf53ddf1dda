import { runGit, runGitOk } from "./git-command.js";
import { GitRepositoryError } from "./git-repository-error.js";
import { requireRef } from "./resolve-ref.js";
import { parseTreeEntryLines } from "./tree-entry-line.js";
import { validateRepoPath } from "./validate-repo-path.js";

/** Content returned when the caller gives no cap. */
export const DEFAULT_BLOB_MAX_BYTES = 1024 * 1024;
/** The largest cap a caller may ask for; larger files are returned truncated. */
export const MAX_BLOB_MAX_BYTES = 16 * 1024 * 1024;
/** Git's own binary test looks at this many leading bytes for a NUL. */
const BINARY_SNIFF_BYTES = 8000;

export interface BlobContent {
  path: string;
  sha: string;
  /** The whole file's size, whatever was returned. */
  size: number;
  encoding: "utf8" | "base64";
  content: string;
  binary: boolean;
  truncated: boolean;
}

/**
 * One file at a ref. At most `maxBytes` bytes of content are read (the process is stopped past that);
 * text that is valid UTF-8 comes back as `utf8`, anything else (binary, or another encoding) as
 * `base64`. A symlink's content is its target. A path that is missing or not a file is `not_found`.
 */
export async function readBlob(
  gitDir: string,
  options: { ref: string; path: string; maxBytes?: number },
): Promise<BlobContent> {
  const path = validateRepoPath(options.path);
  if (path === "") throw new GitRepositoryError("invalid_argument", "path must name a file", "path");
  const maxBytes = blobCap(options.maxBytes);
  const resolved = await requireRef(gitDir, options.ref);
  const [entry] = parseTreeEntryLines(
    await runGitOk(gitDir, ["ls-tree", "-l", "-z", "--end-of-options", resolved.sha, path]),
  );
  if (entry === undefined || entry.type !== "blob" || entry.path !== path) {
    throw new GitRepositoryError("not_found", `path ${JSON.stringify(path)} is not a file at this ref`, "path");
  }
  const size = entry.size ?? 0;
  const result = await runGit(gitDir, ["cat-file", "blob", entry.object], { maxOutputBytes: maxBytes });
  if (!result.truncated && result.exitCode !== 0) {
    throw new GitRepositoryError("failed", "git cat-file failed", undefined, result.stderr.trim());
  }
  const truncated = result.truncated || size > result.stdout.length;
  const bytes = result.stdout;
  const binary = bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0);
  const text = binary ? undefined : decodeUtf8(truncated ? withoutPartialCharacter(bytes) : bytes);
  return text === undefined
    ? { path, sha: entry.object, size, encoding: "base64", content: bytes.toString("base64"), binary, truncated }
    : { path, sha: entry.object, size, encoding: "utf8", content: text, binary, truncated };
}

function blobCap(maxBytes: number | undefined): number {
  if (maxBytes === undefined) return DEFAULT_BLOB_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new GitRepositoryError("invalid_argument", "maxBytes must be a positive integer", "maxBytes");
  }
  return Math.min(maxBytes, MAX_BLOB_MAX_BYTES);
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A cut at the byte cap can split a multi-byte character; dropping that incomplete tail keeps a UTF-8
 * file readable as text instead of falling back to base64 for a cut the file itself does not have.
 */
function withoutPartialCharacter(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: keep looking for the lead byte
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}
