import type { ServerChannel } from "ssh2";
import { launchGit } from "../launcher/launch-git.js";
import type { GitSshService } from "./git-ssh-command.js";

/** The repository a channel serves, and what the gateway needs git to carry (pre-receive hook setup). */
export interface GitServiceTarget {
  readonly gitDir: string;
  /** Extra variables for the git process, e.g. what the protection hook reads. */
  readonly env?: Readonly<Record<string, string>>;
  /** `-c name=value` pairs placed before the sub-command, e.g. `core.hooksPath=<gateway hooks>`. */
  readonly config?: readonly string[];
}

/**
 * Runs `git upload-pack|receive-pack <gitDir>` with the channel as its stdin and stdout (stderr goes
 * to the channel's stderr, where the client prints it) and answers the exit status.
 */
export async function runGitService(
  service: GitSshService,
  target: GitServiceTarget,
  channel: ServerChannel,
  gitProtocol: string | undefined,
): Promise<number> {
  const config = (target.config ?? []).flatMap((pair) => ["-c", pair]);
  const git = await launchGit({
    args: [...config, service.slice("git-".length), target.gitDir],
    env: { ...target.env, ...(gitProtocol ? { GIT_PROTOCOL: gitProtocol } : {}) },
    stdio: [true, true, true],
  }).catch(() => undefined);
  if (!git) return 128;
  channel.pipe(git.stdin!);
  git.stdout!.pipe(channel, { end: false });
  git.stderr!.pipe(channel.stderr, { end: false });
  // A client that goes away must not leave git waiting on a stream nobody reads.
  channel.on("close", () => git.kill());
  git.stdin!.on("error", () => undefined);
  return (await git.closed) ?? 128;
}
