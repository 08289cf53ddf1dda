import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
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

describe("branch protection and quotas inside the push", () => {
  let acme: TestOrganization;
  let client: GitClient;
  let work: string;
  let counter = 0;

  const git = (args: string[], cwd = work, extra: NodeJS.ProcessEnv = {}) => gitCli(work)(args, cwd, extra);
  /** The push's stderr when it is refused; fails the test when it is accepted. */
  const refusedPush = (args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}) =>
    git(["push", ...args], cwd, extra).then(
      () => {
        throw new Error(`git push ${args.join(" ")} was accepted`);
      },
      (error: { stderr: string }) => error.stderr,
    );

  /** A repository with `main` pushed (two commits), cloned into a work folder. */
  async function pushedRepository(name: string) {
    const { body: repo } = await client.createRepository({ body: { name } });
    const remote = `${urls().git!.replace("http://", `http://x:${acme.token}@`)}/${repo.repo_id}.git`;
    const dir = join(work, name);
    await git(["clone", "-q", remote, dir]);
    await commit(dir, "one");
    await commit(dir, "two");
    await git(["push", "-q", "origin", "main"], dir);
    return { repo, dir, remote };
  }
  async function commit(dir: string, message: string, bytes = 16) {
    await writeFile(join(dir, `file-${counter++}.bin`), randomBytes(bytes));
    await git(["add", "."], dir);
    await git(["commit", "-qm", message], dir);
  }
  const remoteRefs = async (remote: string) => (await git(["ls-remote", remote])).stdout;

  beforeAll(async () => {
    acme = await createOrganization("gitpolicy");
    client = createGitClient({ baseUrl: urls().git!, token: acme.token });
    work = await mkdtemp(join(tmpdir(), "git-policy-"));
    await writeFile(join(work, ".gitconfig"), "[init]\n\tdefaultBranch = main\n");
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("refuses force pushes and deletions where the rule says so, leaving refs unchanged", async () => {
    const { repo, dir, remote } = await pushedRepository("guarded");
    await client.putProtectionRule({
      path: { repo_id: repo.repo_id },
      body: { branch_pattern: "main", block_force_push: true, block_deletion: true },
    });
    const before = await remoteRefs(remote);
    await git(["reset", "-q", "--hard", "HEAD~1"], dir);
    await commit(dir, "rewritten");
    const forced = await refusedPush(["--force", "origin", "main"], dir);
    expect(forced).toContain("remote: force pushes to branch main are refused by protection rule");
    expect(forced).toContain("pre-receive hook declined");
    expect(await remoteRefs(remote)).toBe(before);
    const deleted = await refusedPush(["origin", ":main"], dir);
    expect(deleted).toContain("deleting branch main is refused");
    expect(await remoteRefs(remote)).toBe(before);

    // A fast-forward passes, and so does anything on a branch no rule matches.
    await git(["reset", "-q", "--hard", "origin/main"], dir);
    await commit(dir, "three");
    await git(["push", "-q", "origin", "main"], dir);
    await git(["push", "-q", "origin", "main:topic"], dir);
    await git(["push", "-q", "--force", "origin", "HEAD~2:topic"], dir);
    await git(["push", "-q", "origin", ":topic"], dir);
  });

  it("sends changes to branches that need reviews through pull requests, refusing a whole atomic push", async () => {
    const { repo, dir, remote } = await pushedRepository("reviewed");
    await git(["push", "-q", "origin", "main:release/1"], dir);
    await client.putProtectionRule({
      path: { repo_id: repo.repo_id },
      body: { branch_pattern: "release/**", required_approvals: 1 },
    });
    await commit(dir, "direct");
    const before = await remoteRefs(remote);
    const direct = await refusedPush(["--atomic", "origin", "main", "main:release/1"], dir);
    expect(direct).toContain("branch release/1 takes changes through pull requests only");
    // Atomic or not, a refusal of one ref keeps every ref of the push where it was.
    expect(await remoteRefs(remote)).toBe(before);
    // A new branch under the pattern may be created; its later changes go through pull requests.
    await git(["push", "-q", "origin", "main:release/2"], dir);
    expect(await remoteRefs(remote)).toContain("refs/heads/release/2");
  });

  it("refuses a push past the size or pack quota and keeps nothing of it", async () => {
    const { repo, dir, remote } = await pushedRepository("quota");
    const { body: current } = await client.getRepository({ path: { repo_id: repo.repo_id } });
    await client.setRepositoryQuotas({
      path: { repo_id: repo.repo_id },
      body: { size_limit_bytes: current.size_bytes + 64 * 1024, pack_count_limit: null },
    });
    const before = await remoteRefs(remote);
    await commit(dir, "big", 512 * 1024);
    const big = await refusedPush(["origin", "main"], dir);
    expect(big).toContain("size_limit_bytes");
    expect(await remoteRefs(remote)).toBe(before);
    const { body: after } = await client.getRepository({ path: { repo_id: repo.repo_id } });
    expect(after.size_bytes).toBe(current.size_bytes);
    expect(after.size_limit_bytes).toBe(current.size_bytes + 64 * 1024);

    // More than git's unpack limit of objects arrive as a pack: past pack_count_limit.
    await client.setRepositoryQuotas({
      path: { repo_id: repo.repo_id },
      body: { size_limit_bytes: null, pack_count_limit: after.pack_count },
    });
    for (let i = 0; i < 150; i++) await writeFile(join(dir, `many-${i}.txt`), `${i}\n`);
    await git(["add", "."], dir);
    await git(["commit", "-qm", "many"], dir);
    const packed = await refusedPush(["origin", "main"], dir);
    expect(packed).toContain("pack_count_limit");
    expect(await remoteRefs(remote)).toBe(before);
    // Without limits the same push goes through.
    await client.setRepositoryQuotas({
      path: { repo_id: repo.repo_id },
      body: { size_limit_bytes: null, pack_count_limit: null },
    });
    await git(["push", "-q", "origin", "main"], dir);
    const { body: grown } = await client.getRepository({ path: { repo_id: repo.repo_id } });
    expect(grown.size_bytes).toBeGreaterThan(current.size_bytes + 512 * 1024);
  });

  it("applies the same rules over SSH", async () => {
    const { repo, dir } = await pushedRepository("guarded-ssh");
    await client.putProtectionRule({
      path: { repo_id: repo.repo_id },
      body: { branch_pattern: "*", block_force_push: true },
    });
    const key = join(work, "ssh-key");
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
    await client.addSshKey({ body: { name: "policy", public_key: (await readFile(`${key}.pub`, "utf8")).trim() } });
    const ssh = sshWith(key);
    const address = `ssh://git@127.0.0.1:${new URL(urls().gitSsh!).port}/${repo.repo_id}.git`;
    await git(["reset", "-q", "--hard", "HEAD~1"], dir);
    await commit(dir, "rewritten");
    const forced = await refusedPush(["--force", address, "main"], dir, ssh);
    expect(forced).toContain("force pushes to branch main are refused");
  });
});
