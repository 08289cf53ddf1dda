import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createGitClient, type GitClient } from "../../gen/openapi/git/client.js";
import { gitCli, sshWith } from "./git-cli.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const run = promisify(execFile);
const urls = () => inject("platformUrls");

describe("the git wire over SSH", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let acmeGit: GitClient;
  let work: string;
  let repoId: string;
  let sshPort: string;

  /** A new ed25519 key pair on disk, its public line uploaded with `client`'s API key. */
  async function uploadedKey(client: GitClient, name: string, readOnly = false) {
    const file = join(work, name);
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", name, "-f", file]);
    const publicKey = (await readFile(`${file}.pub`, "utf8")).trim();
    const { body } = await client.addSshKey({ body: { name, public_key: publicKey, read_only: readOnly } });
    return { file, id: body.id };
  }

  /** The git CLI with `key` as its only SSH identity, and no host key remembered. */
  const git = (key: string, args: string[], cwd = work) => gitCli(work)(args, cwd, sshWith(key));
  const address = (repo: string) => `ssh://git@127.0.0.1:${sshPort}/${repo}.git`;

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("gitssh"), createOrganization("gitssh-other")]);
    acmeGit = createGitClient({ baseUrl: urls().git!, token: acme.token });
    work = await mkdtemp(join(tmpdir(), "git-ssh-"));
    await writeFile(join(work, ".gitconfig"), "[init]\n\tdefaultBranch = main\n");
    sshPort = new URL(urls().gitSsh!).port;
    repoId = (await acmeGit.createRepository({ body: { name: "over-ssh" } })).body.repo_id;
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("prints the host key's fingerprint in the ready line, as ssh-keyscan sees it", async () => {
    const { stdout: scanned } = await run("ssh-keyscan", ["-t", "ed25519", "-p", sshPort, "127.0.0.1"]);
    await writeFile(join(work, "host.pub"), scanned);
    const { stdout } = await run("ssh-keygen", ["-l", "-E", "sha256", "-f", join(work, "host.pub")]);
    expect(stdout.split(" ")[1]).toBe(urls().gitSshHostKey);
  });

  it("clones and pushes with an uploaded key, and records its last use", async () => {
    const key = await uploadedKey(acmeGit, "laptop");
    await git(key.file, ["clone", "-q", address(repoId), "clone"]);
    const dir = join(work, "clone");
    await writeFile(join(dir, "hello.txt"), "over ssh\n");
    await git(key.file, ["add", "."], dir);
    await git(key.file, ["commit", "-qm", "over ssh"], dir);
    await git(key.file, ["push", "-q", "origin", "main"], dir);
    const commits = await acmeGit.listCommits({ path: { repo_id: repoId } });
    expect(commits.body.commits.map((c) => c.subject)).toEqual(["over ssh"]);
    // The size is refreshed after a push over SSH as over HTTP.
    expect((await acmeGit.getRepository({ path: { repo_id: repoId } })).body.size_bytes).toBeGreaterThan(0);
    // Protocol v2 and the human address work too.
    const { stdout } = await git(key.file, ["-c", "protocol.version=2", "ls-remote", address(`${acme.name}/over-ssh`)]);
    expect(stdout).toContain("refs/heads/main");
    const listed = (await acmeGit.listSshKeys()).body.keys.find((k) => k.id === key.id)!;
    expect(Date.parse(listed.last_used!)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("lets a read-only key clone and refuses its push with a message git prints", async () => {
    const key = await uploadedKey(acmeGit, "deploy", true);
    await git(key.file, ["clone", "-q", address(repoId), "readonly"]);
    const dir = join(work, "readonly");
    await writeFile(join(dir, "more.txt"), "no\n");
    await git(key.file, ["add", "."], dir);
    await git(key.file, ["commit", "-qm", "refused"], dir);
    const refused = await git(key.file, ["push", "origin", "main"], dir).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toMatch(/read-only/);
    const commits = await acmeGit.listCommits({ path: { repo_id: repoId } });
    expect(commits.body.commits.map((c) => c.subject)).not.toContain("refused");
  });

  it("refuses another organization's key, an unknown key and a viewer's push alike over SSH", async () => {
    const otherKey = await uploadedKey(createGitClient({ baseUrl: urls().git!, token: other.token }), "other");
    const foreign = await git(otherKey.file, ["clone", address(repoId), "foreign"]).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(foreign).toMatch(/repository not found/);
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(work, "unknown")]);
    await expect(git(join(work, "unknown"), ["ls-remote", address(repoId)])).rejects.toThrow(/Permission denied/);

    const viewer = await acme.client.iam.createApiKey({ orgId: acme.id, name: "ssh-viewer", roles: ["git.viewer"] });
    const viewerKey = await uploadedKey(createGitClient({ baseUrl: urls().git!, token: viewer.secret }), "viewer");
    await git(viewerKey.file, ["clone", "-q", address(repoId), "viewer-clone"]);
    const dir = join(work, "viewer-clone");
    await git(viewerKey.file, ["commit", "-q", "--allow-empty", "-m", "nope"], dir);
    const refused = await git(viewerKey.file, ["push", "origin", "main"], dir).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toMatch(/forbidden: .*git\.editor/);
    // Revoking the API key retires the SSH keys uploaded with it.
    await acme.client.iam.revokeApiKey({ orgId: acme.id, keyId: viewer.apiKey!.keyId });
    const revoked = await git(viewerKey.file, ["ls-remote", address(repoId)]).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(revoked).toMatch(/revoked or expired/);
  });
});
