import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ssh2 from "ssh2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GitRepoRef } from "./git-ssh-command.js";
import { startGitSshListener, type GitSshListener, type SshUserKey } from "./git-ssh-server.js";
import { loadOrCreateHostKey, sshKeyFingerprint } from "./ssh-host-key.js";

const REPO_ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const root = mkdtempSync(join(tmpdir(), "git-ssh-test-"));
const gitDir = join(root, "repo.git");

/** Makes a key pair with ssh-keygen, as users do, and answers the private key path and fingerprint. */
function userKey(name: string): { path: string; fingerprint: string; privateKey: string } {
  const path = join(root, name);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path]);
  const parsed = ssh2.utils.parseKey(readFileSync(`${path}.pub`, "utf8"));
  if (parsed instanceof Error) throw parsed;
  return { path, fingerprint: sshKeyFingerprint(parsed.getPublicSSH()), privateKey: readFileSync(path, "utf8") };
}

let listener: GitSshListener;
const touched: string[] = [];
const editor = userKey("editor");
const reader = userKey("reader");
const stranger = userKey("stranger");

beforeAll(async () => {
  execFileSync("git", ["init", "-q", "--bare", "--initial-branch=main", gitDir]);
  const keys = new Map<string, SshUserKey>([
    [editor.fingerprint, { keyId: "k-editor", orgId: "org-a", principal: "user-editor", readOnly: false }],
    [reader.fingerprint, { keyId: "k-reader", orgId: "org-a", principal: "user-editor", readOnly: true }],
  ]);
  const hostKey = await loadOrCreateHostKey(root);
  listener = await startGitSshListener(
    { host: "127.0.0.1", port: 0, hostKey },
    {
      findKey: (fingerprint) => Promise.resolve(keys.get(fingerprint)),
      touchKey: (keyId) => Promise.resolve(void touched.push(keyId)),
      authorize: (_key, repo: GitRepoRef) =>
        Promise.resolve(
          (repo.kind === "id" && repo.repoId === REPO_ID) || (repo.kind === "name" && repo.name === "demo")
            ? { ok: true as const, gitDir }
            : { ok: false as const, message: "repository not found" },
        ),
    },
  );
});
afterAll(() => listener.close());

/** Runs the git CLI without blocking: the server under test lives in this same process. */
function git(cwd: string, key: string, ...args: string[]): Promise<{ status: number; stderr: string }> {
  return gitWith({}, cwd, key, ...args);
}

function gitWith(
  extraEnv: Record<string, string>,
  cwd: string,
  key: string,
  ...args: string[]
): Promise<{ status: number; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...gitEnv(key), ...extraEnv };
    execFile("git", args, { cwd, encoding: "utf8", env }, (error, _stdout, stderr) =>
      resolve({ status: error ? Number(error.code ?? 1) || 1 : 0, stderr }),
    );
  });
}

function gitEnv(key: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: root,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "A",
    GIT_AUTHOR_EMAIL: "a@example.com",
    GIT_COMMITTER_NAME: "A",
    GIT_COMMITTER_EMAIL: "a@example.com",
    GIT_SSH_COMMAND: `ssh -i ${key} -p ${listener.port} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o LogLevel=ERROR`,
  };
}

describe("git over SSH with the OpenSSH client", () => {
  it("pushes and clones by id and by name, over protocol v2, and records key use", async () => {
    const work = mkdtempSync(join(root, "work-"));
    execFileSync("git", ["init", "-q", "--initial-branch=main", work]);
    writeFileSync(join(work, "a.txt"), "hello over ssh\n");
    expect((await git(work, editor.path, "add", "a.txt")).status).toBe(0);
    expect((await git(work, editor.path, "commit", "-qm", "first")).status).toBe(0);
    const push = await git(work, editor.path, "push", `ssh://git@127.0.0.1/${REPO_ID}.git`, "main");
    expect(push.status, push.stderr).toBe(0);

    const clone = join(root, "clone-by-name");
    const cloned = await gitWith(
      { GIT_TRACE_PACKET: "1" },
      root,
      reader.path,
      "-c",
      "protocol.version=2",
      "clone",
      "-q",
      `git@127.0.0.1:org-a/demo.git`,
      clone,
    );
    expect(cloned.status, cloned.stderr).toBe(0);
    expect(readFileSync(join(clone, "a.txt"), "utf8")).toBe("hello over ssh\n");
    // The server side spoke protocol v2, which only GIT_PROTOCOL passed through the channel can ask for.
    expect(cloned.stderr).toMatch(/< version 2/);
    expect(touched).toContain("k-editor");
    expect(touched).toContain("k-reader");
  });

  it("refuses a push with a read-only key, with a message the client prints", async () => {
    const work = join(root, "clone-by-name");
    writeFileSync(join(work, "b.txt"), "more\n");
    await git(work, reader.path, "add", "b.txt");
    await git(work, reader.path, "commit", "-qm", "second");
    const push = await git(work, reader.path, "push", "origin", "main");
    expect(push.status).not.toBe(0);
    expect(push.stderr).toContain("this SSH key is read-only");
  });

  it("refuses an unknown key and hides repositories the check does not allow", async () => {
    const unknown = await git(root, stranger.path, "ls-remote", `ssh://git@127.0.0.1/${REPO_ID}.git`);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/Permission denied/);
    const missing = await git(root, editor.path, "ls-remote", "git@127.0.0.1:other-org/secret.git");
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain("repository not found");
  });
});

/** Connects with the ssh2 client and runs one request, answering exit code and stderr. */
function exec(privateKey: string, command: string): Promise<{ code: number | undefined; stderr: string }> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    client.on("error", reject);
    client.on("ready", () => {
      client.exec(command, (error, channel) => {
        if (error) return reject(error);
        let stderr = "";
        let code: number | undefined;
        channel.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        channel.on("exit", (exitCode: number) => (code = exitCode));
        channel.on("close", () => {
          client.end();
          resolve({ code, stderr });
        });
        channel.resume();
      });
    });
    client.connect({ host: "127.0.0.1", port: listener.port, username: "git", privateKey });
  });
}

describe("git over SSH with an in-process client", () => {
  it("serves nothing but the two git services", async () => {
    const result = await exec(editor.privateKey, "cat /etc/passwd");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("only git-upload-pack and git-receive-pack");
    const climb = await exec(editor.privateKey, "git-upload-pack '../../etc.git'");
    expect(climb.code).toBe(1);
  });

  it("refuses a shell", async () => {
    await expect(
      new Promise((resolve, reject) => {
        const client = new ssh2.Client();
        client.on("ready", () => client.shell((error) => (client.end(), error ? reject(error) : resolve("opened"))));
        client.on("error", reject);
        client.connect({ host: "127.0.0.1", port: listener.port, username: "git", privateKey: editor.privateKey });
      }),
    ).rejects.toThrow();
  });

  it("keeps the host key across starts, owner-only", async () => {
    const again = await loadOrCreateHostKey(root);
    expect(again.fingerprint).toBe((await loadOrCreateHostKey(root)).fingerprint);
    expect(again.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(statSync(join(root, "git-ssh-host-key")).mode & 0o777).toBe(0o600);
  });
});
