import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerChannel } from "ssh2";
import type { GitSshService } from "./git-ssh-command.js";

/** The repository a channel serves, and what the gateway needs git to carry (pre-receive hook setup). */
export interface GitServiceTarget {
  readonly gitDir: string;
  /** Extra variables for the git process, e.g. what the protection hook reads. */
  readonly env?: Readonly<Record<string, string>>;
  /** `-c name=value` pairs placed before the sub-command, e.g. `core.hooksPath=<gateway hooks>`. */
  readonly config?: readonly string[];
}

let emptyHome: string | undefined;

/**
 * Runs `git upload-pack|receive-pack <gitDir>` with the channel as its stdin and stdout (stderr goes
 * to the channel's stderr, where the client prints it) and answers the exit status. The environment
 * is built from nothing, so no configuration of the server's own user shapes what git does.
 */
export function runGitService(
  service: GitSshService,
  target: GitServiceTarget,
  channel: ServerChannel,
  gitProtocol: string | undefined,
): Promise<number> {
  emptyHome ??= mkdtempSync(join(tmpdir(), "git-ssh-home-"));
  const config = (target.config ?? []).flatMap((pair) => ["-c", pair]);
  const child = spawn("git", [...config, service.slice("git-".length), target.gitDir], {
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...target.env,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: emptyHome,
      XDG_CONFIG_HOME: emptyHome,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      ...(gitProtocol ? { GIT_PROTOCOL: gitProtocol } : {}),
    },
  });
  channel.pipe(child.stdin);
  child.stdout.pipe(channel, { end: false });
  child.stderr.pipe(channel.stderr, { end: false });
  // A client that goes away must not leave git waiting on a pipe nobody reads.
  channel.on("close", () => child.kill("SIGTERM"));
  child.stdin.on("error", () => undefined);
  return new Promise((resolve) => {
    child.on("error", () => resolve(128));
    child.on("close", (code) => resolve(code ?? 128));
  });
}
