import { fork, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

/** What to run: `git <args>`. */
export interface GitLaunch {
  readonly args: readonly string[];
  /** Variables beside the isolation every git gets (see gitEnvironment); they cannot override it. */
  readonly env?: Readonly<Record<string, string>>;
  /** The working directory; an empty one by default. */
  readonly cwd?: string;
  /** Which of stdin, stdout and stderr the caller uses; the others are /dev/null. */
  readonly stdio: readonly [stdin: boolean, stdout: boolean, stderr: boolean];
}

/** A running git, in a process group of its own. */
export interface LaunchedGit {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  /** The exit code (null when a signal ended git), once git has exited and its output streams have ended. */
  readonly closed: Promise<number | null>;
  /** Sends `signal` to git's process group, so that what git started ends with it. */
  kill(signal?: NodeJS.Signals): void;
}

type LauncherMessage =
  | { type: "ready"; path: string }
  | { type: "spawned"; id: string }
  | { type: "failed"; id: string; message: string }
  | { type: "exit"; id: string; code: number | null };

interface Request {
  onMessage(message: LauncherMessage): void;
  /** The launcher went away with this request unfinished. */
  onLost(): void;
}

interface Launcher {
  readonly process: ChildProcess;
  readonly socketPath: string;
  readonly requests: Map<string, Request>;
}

export const LAUNCHER_SCRIPT = fileURLToPath(new URL("./git-launcher.mjs", import.meta.url));

let launcher: Promise<Launcher> | undefined;
let emptyHome: string | undefined;

/**
 * An empty folder made once per process, git's HOME and XDG config: an operator's own
 * configuration (aliases, hooks, credential helpers) must never shape what the server does.
 */
function emptyHomeDir(): string {
  emptyHome ??= mkdtempSync(join(tmpdir(), "git-home-"));
  return emptyHome;
}

/**
 * git's whole environment, built from nothing rather than filtered from the server's, so that no
 * `GIT_*` variable of the server (GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH...) leaks in.
 */
function gitEnvironment(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const home = emptyHomeDir();
  return {
    ...extra,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
  };
}

/**
 * Starting a process copies the page tables of the one that starts it, and the server's are large
 * (the embedded database alone holds hundreds of MiB): a spawn from the server took 15 to 30 ms
 * where the same spawn from a fresh Node.js takes 1 to 2. So a small helper process starts every
 * git of this process, and git's standard streams are sockets connected straight to the caller.
 * It is started on first use, or ahead of it by {@link prepareGitLauncher}, and again if it dies.
 */
function currentLauncher(): Promise<Launcher> {
  launcher ??= new Promise<Launcher>((resolve, reject) => {
    const child = fork(LAUNCHER_SCRIPT, [], {
      // Neither the server's Node.js flags (its loader, a profiler) nor NODE_OPTIONS reach it.
      execArgv: [],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}) },
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    const requests = new Map<string, Request>();
    let socketPath: string | undefined;
    child.on("message", (message: LauncherMessage) => {
      if (message.type !== "ready") return requests.get(message.id)?.onMessage(message);
      socketPath = message.path;
      // Until now the channel kept this process alive for whoever waits on the launcher; from now
      // on only requests in flight do (see track).
      child.channel?.unref();
      resolve({ process: child, socketPath: message.path, requests });
    });
    child.once("error", (error) => {
      launcher = undefined;
      reject(error);
    });
    child.once("exit", () => {
      launcher = undefined;
      // A launcher that was killed could not remove its socket's directory.
      if (socketPath && basename(dirname(socketPath)).startsWith("git-launcher-"))
        rmSync(dirname(socketPath), { recursive: true, force: true });
      reject(new Error("the git launcher exited before it was ready"));
      for (const request of requests.values()) request.onLost();
      requests.clear();
    });
    child.unref();
  });
  return launcher;
}

/** Starts the launcher now, so that the first git request does not wait for it. */
export function prepareGitLauncher(): void {
  currentLauncher().catch(() => undefined);
}

function track(owner: Launcher, id: string, request: Request): () => void {
  owner.requests.set(id, request);
  if (owner.requests.size === 1) owner.process.channel?.ref();
  return () => {
    if (!owner.requests.delete(id)) return;
    if (owner.requests.size === 0) owner.process.channel?.unref();
  };
}

function connectStream(socketPath: string, id: string, fd: number): Socket {
  const socket = connect(socketPath);
  socket.write(`${id}${fd}\n`);
  return socket;
}

/** Starts git through the launcher; rejects when git cannot be started. */
export async function launchGit(launch: GitLaunch): Promise<LaunchedGit> {
  const owner = await currentLauncher();
  const id = randomUUID();
  const streams = launch.stdio.map((wanted, fd) => (wanted ? connectStream(owner.socketPath, id, fd) : null));
  const [stdin = null, stdout = null, stderr = null] = streams;
  let reportExit: (code: number | null) => void = () => undefined;
  const exited = new Promise<number | null>((resolve) => (reportExit = resolve));
  let started = false;
  let ended = false;
  return new Promise<LaunchedGit>((resolve, reject) => {
    const abandon = (error: Error) => {
      untrack();
      for (const stream of streams) stream?.destroy();
      if (owner.process.connected) owner.process.send({ type: "cancel", id });
      reportExit(null);
      reject(error);
    };
    const untrack = track(owner, id, {
      onMessage(message) {
        if (message.type === "failed") return abandon(new Error(`git could not be started: ${message.message}`));
        if (message.type === "exit") {
          ended = true;
          untrack();
          return reportExit(message.code);
        }
        if (message.type !== "spawned") return;
        started = true;
        resolve({
          stdin,
          stdout,
          stderr,
          closed: Promise.all([exited, streamClosed(stdout), streamClosed(stderr)]).then(([code]) => code),
          kill(signal = "SIGTERM") {
            if (!ended && owner.process.connected) owner.process.send({ type: "kill", id, signal });
          },
        });
      },
      onLost: () => abandon(new Error("the git launcher exited")),
    });
    // Before git runs, a broken connection means it cannot run; after, the caller sees the stream end.
    for (const stream of streams) stream?.on("error", (error) => started || abandon(error));
    owner.process.send({
      type: "spawn",
      id,
      file: "git",
      args: launch.args,
      env: gitEnvironment(launch.env),
      cwd: launch.cwd ?? emptyHomeDir(),
      stdio: launch.stdio,
    });
  });
}

function streamClosed(stream: Socket | null): Promise<void> {
  if (!stream || stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once("close", () => resolve()));
}
