import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import ssh2, { type AuthContext, type ServerChannel } from "ssh2";
import { parseGitSshCommand, type GitRepoRef } from "./git-ssh-command.js";
import { runGitService, type GitServiceTarget } from "./git-service-process.js";
import { sshKeyFingerprint, type SshHostKey } from "./ssh-host-key.js";

/** An uploaded user key, as the key store finds it by fingerprint. */
export interface SshUserKey {
  readonly keyId: string;
  readonly orgId: string;
  /** Who acts when this key is used; handed back to `authorize` unchanged. */
  readonly principal: string;
  /** A read-only key clones and fetches but never pushes, whatever its owner's role. */
  readonly readOnly: boolean;
}

/** Where the repository is, or the message the git client prints when it may not be used. */
export type GitSshAuthorization =
  | ({
      readonly ok: true;
      /** Called once git has exited (the gateway refreshes a repository's size after a push). */
      readonly onExit?: (exitCode: number) => Promise<void>;
    } & GitServiceTarget)
  | { readonly ok: false; readonly message: string };

export interface GitSshDependencies {
  findKey(fingerprint: string): Promise<SshUserKey | undefined>;
  /** Records that the key was just used (the key listing shows it); failures are not the client's concern. */
  touchKey(keyId: string): Promise<void>;
  /** The gateway's access check: roles, per-repository grants; another organization's repo reads as missing. */
  authorize(key: SshUserKey, repo: GitRepoRef, access: "read" | "write"): Promise<GitSshAuthorization>;
  log?(message: string, fields: Record<string, unknown>): void;
}

export interface GitSshListener {
  readonly port: number;
  close(): Promise<void>;
}

/** Time a client has to authenticate before the connection is dropped. */
const AUTH_TIMEOUT_MS = 30_000;
/** git runs one command per connection; a few more cover multiplexed clients without letting one fork without end. */
const MAX_EXECS_PER_CONNECTION = 4;
/** Connections one listener holds at once unless told otherwise. */
const DEFAULT_MAX_CONNECTIONS = 256;
const READ_ONLY_MESSAGE = "this SSH key is read-only: it can clone and fetch, not push";

/**
 * The git wire over SSH: public-key authentication against uploaded user keys, then exactly one
 * `git-upload-pack` or `git-receive-pack` per channel. No shell, no pty, no port forwarding, and no
 * environment but GIT_PROTOCOL (which carries protocol v2).
 */
export async function startGitSshListener(
  options: {
    readonly host: string;
    readonly port: number;
    readonly hostKey: SshHostKey;
    readonly maxConnections?: number;
  },
  deps: GitSshDependencies,
): Promise<GitSshListener> {
  const clients = new Set<ssh2.Connection>();
  const server = new ssh2.Server({ hostKeys: [options.hostKey.privateKey] }, (client) => {
    clients.add(client);
    client.on("close", () => clients.delete(client));
    let user: SshUserKey | undefined;
    let running = 0;
    const timer = setTimeout(() => client.end(), AUTH_TIMEOUT_MS);
    client.on("error", () => client.end());
    client.on("authentication", (ctx) => {
      void authenticate(ctx, deps).then((key) => {
        user = key;
        if (key) clearTimeout(timer);
      });
    });
    client.on("close", () => clearTimeout(timer));
    client.on("session", (accept) => {
      const session = accept();
      let gitProtocol: string | undefined;
      session.on("pty", (_accept, reject) => reject?.());
      session.on("shell", (_accept, reject) => reject?.());
      session.on("subsystem", (_accept, reject) => reject?.());
      session.on("x11", (_accept, reject) => reject?.());
      session.on("env", (acceptEnv, reject, info) => {
        // Protocol v2 is negotiated through this one variable; `version=2` and friends only.
        if (info.key === "GIT_PROTOCOL" && /^[A-Za-z0-9=:._-]{1,64}$/.test(info.val)) {
          gitProtocol = info.val;
          acceptEnv?.();
        } else reject?.();
      });
      session.on("exec", (acceptExec, _reject, info) => {
        const channel = acceptExec();
        if (!user) return finish(channel, "not authenticated");
        if (running >= MAX_EXECS_PER_CONNECTION) return finish(channel, "too many commands on one connection");
        running++;
        void serveExec(channel, info.command, user, gitProtocol, deps).finally(() => running--);
      });
    });
  });
  server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  // Past listening, a failed accept concerns one client only; the listener carries on.
  server.on("error", (error: Error) => deps.log?.("git ssh listener error", { error: error.message }));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Closing stops new connections only: open ones end too, or shutdown would wait on them.
        for (const client of clients) client.end();
      }),
  };
}

async function authenticate(ctx: AuthContext, deps: GitSshDependencies): Promise<SshUserKey | undefined> {
  if (ctx.method !== "publickey") {
    ctx.reject(["publickey"]);
    return undefined;
  }
  const key = await deps.findKey(sshKeyFingerprint(ctx.key.data)).catch(() => undefined);
  if (!key) {
    ctx.reject(["publickey"]);
    return undefined;
  }
  // Without a signature the client only asks whether the key would do; it signs next.
  if (!ctx.signature || !ctx.blob) {
    ctx.accept();
    return undefined;
  }
  const parsed = ssh2.utils.parseKey(ctx.key.data);
  const valid =
    !(parsed instanceof Error) &&
    timingSafeEqual(parsed.getPublicSSH(), ctx.key.data) &&
    parsed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true;
  if (!valid) {
    ctx.reject(["publickey"]);
    return undefined;
  }
  ctx.accept();
  deps.touchKey(key.keyId).catch(() => undefined);
  return key;
}

async function serveExec(
  channel: ServerChannel,
  command: string,
  key: SshUserKey,
  gitProtocol: string | undefined,
  deps: GitSshDependencies,
): Promise<void> {
  const parsed = parseGitSshCommand(command);
  if (!parsed) return finish(channel, "only git-upload-pack and git-receive-pack of '<repo_id>.git' are served");
  const write = parsed.service === "git-receive-pack";
  if (write && key.readOnly) return finish(channel, READ_ONLY_MESSAGE);
  let access: GitSshAuthorization;
  try {
    access = await deps.authorize(key, parsed.repo, write ? "write" : "read");
  } catch (error) {
    deps.log?.("git ssh authorization failed", { error: String(error) });
    return finish(channel, "internal error");
  }
  if (!access.ok) return finish(channel, access.message);
  const exitCode = await runGitService(parsed.service, access, channel, gitProtocol);
  await access
    .onExit?.(exitCode)
    .catch((error: unknown) => deps.log?.("git ssh after-exit step failed", { error: String(error) }));
  channel.exit(exitCode);
  channel.end();
}

/** Ends a channel with a message the git client prints (`fatal: ...` comes from the client itself). */
function finish(channel: ServerChannel, message: string): void {
  channel.stderr.write(`${message}\n`);
  channel.exit(1);
  channel.end();
}
