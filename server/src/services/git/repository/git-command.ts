import { launchGit, type LaunchedGit } from "../launcher/launch-git.js";
import { GitRepositoryError } from "./git-repository-error.js";

/** Wall-clock budget of one git process unless the caller gives another. */
export const DEFAULT_GIT_TIMEOUT_MS = 10_000;
/** Stdout kept from one git process unless the caller gives another cap. */
export const DEFAULT_GIT_OUTPUT_BYTES = 32 * 1024 * 1024;

export interface GitCommandOptions {
  timeoutMs?: number;
  /** Stdout past this many bytes is dropped and the process killed; the result says `truncated`. */
  maxOutputBytes?: number;
  /** Written to stdin, which is then closed (stdin is always closed, so git never waits on it). */
  input?: string | Buffer;
  /** Extra variables (author identity for commit-tree); they cannot re-enable user configuration. */
  env?: Record<string, string>;
}

export interface GitCommandResult {
  stdout: Buffer;
  stderr: string;
  /** Null when the process was killed after the output cap. */
  exitCode: number | null;
  truncated: boolean;
}

const STDERR_KEEP_BYTES = 16 * 1024;

/**
 * What plumbing reads need beyond the isolation every git gets; the caller's variables cannot
 * override them.
 */
const PLUMBING_ENVIRONMENT = {
  GIT_ASKPASS: "/bin/false",
  // Paths given after `--` are literal names, never `:(glob)` or other pathspec magic.
  GIT_LITERAL_PATHSPECS: "1",
  GIT_NO_REPLACE_OBJECTS: "1",
  // Reads never take the index or refresh locks that would race a concurrent push.
  GIT_OPTIONAL_LOCKS: "0",
  GIT_ATTR_NOSYSTEM: "1",
  // Messages parsed below are English whatever the host's locale.
  LC_ALL: "C",
  LANG: "C",
};

/**
 * Options placed before every sub-command: no hooks (the repository's own `hooks/` included), no
 * fetching of anything (a submodule or promisor remote could otherwise reach the network), no pager.
 */
const SAFE_CONFIG = ["-c", "core.hooksPath=/dev/null", "-c", "protocol.allow=never", "-c", "core.fsmonitor=false"];

/**
 * Runs `git --git-dir=<gitDir> <args>` on a bare repository with a bounded time and output. Arguments
 * are passed as an argv array (no shell); callers put user-supplied values only after validation and
 * after `--end-of-options` or `--`. A non-zero exit is returned, not thrown: what it means depends on
 * the sub-command. Timeouts and spawn failures throw {@link GitRepositoryError}.
 */
export async function runGit(
  gitDir: string,
  args: readonly string[],
  options: GitCommandOptions = {},
): Promise<GitCommandResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_GIT_OUTPUT_BYTES;
  let git: LaunchedGit;
  try {
    git = await launchGit({
      args: [`--git-dir=${gitDir}`, ...SAFE_CONFIG, ...args],
      env: { ...options.env, ...PLUMBING_ENVIRONMENT },
      stdio: [true, true, true],
    });
  } catch (error) {
    throw new GitRepositoryError("failed", "git could not be started", undefined, (error as Error).message);
  }
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  let timedOut = false;
  let stderr = "";
  // SIGKILL reaches git's whole process group, so whatever git started ends too.
  const timer = setTimeout(() => {
    timedOut = true;
    git.kill("SIGKILL");
  }, timeoutMs);

  git.stdout!.on("data", (chunk: Buffer) => {
    if (truncated) return;
    const room = maxOutputBytes - kept;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      kept += room;
      truncated = true;
      git.kill("SIGKILL");
      return;
    }
    chunks.push(chunk);
    kept += chunk.length;
  });
  git.stderr!.on("data", (chunk: Buffer) => {
    if (stderr.length < STDERR_KEEP_BYTES) stderr += chunk.toString("utf8").slice(0, STDERR_KEEP_BYTES - stderr.length);
  });
  // git may exit before reading all its input (or be killed); that is not an error of ours.
  git.stdin!.on("error", () => {});
  git.stdin!.end(options.input ?? "");

  const code = await git.closed;
  clearTimeout(timer);
  if (timedOut && !truncated) {
    throw new GitRepositoryError("timeout", `git ${args[0] ?? ""} took longer than ${timeoutMs} ms`, undefined, stderr);
  }
  return { stdout: Buffer.concat(chunks, kept), stderr, exitCode: truncated ? null : code, truncated };
}

/**
 * Runs git and requires success: a non-zero exit becomes `failed` (git's stderr kept as detail only),
 * and output past the cap too, since the callers of this parse the whole output.
 */
export async function runGitOk(
  gitDir: string,
  args: readonly string[],
  options: GitCommandOptions = {},
): Promise<string> {
  const result = await runGit(gitDir, args, options);
  if (result.truncated) throw new GitRepositoryError("failed", `git ${args[0] ?? ""} produced too much output`);
  if (result.exitCode !== 0) {
    throw new GitRepositoryError("failed", `git ${args[0] ?? ""} failed`, undefined, result.stderr.trim());
  }
  return result.stdout.toString("utf8");
}
