import * as fs from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import git from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createGitClient, type GitClient } from "../../gen/openapi/git/client.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const gitUrl = (): string => inject("platformUrls").git!;
const author = { name: "Ada", email: "ada@example.com" };

// A second git client, written in JavaScript: it speaks the smart HTTP protocol its own way
// (protocol v1, its own pack writer), so the gateway is not only ever tested against git itself.
describe("the git gateway with isomorphic-git", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let client: GitClient;
  let work: string;
  const onAuth = (key: string) => () => ({ username: "x", password: key });

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("isogit"), createOrganization("isogit-other")]);
    client = createGitClient({ baseUrl: gitUrl(), token: acme.token });
    work = await mkdtemp(join(tmpdir(), "isogit-"));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("clones, commits, pushes and fetches over smart HTTP", async () => {
    const { body: repo } = await client.createRepository({ body: { name: "iso" } });
    const url = `${gitUrl()}/${repo.repo_id}.git`;
    const dir = join(work, "first");
    await git.init({ fs, dir, defaultBranch: "main" });
    await writeFile(join(dir, "hello.txt"), "from isomorphic-git\n");
    await git.add({ fs, dir, filepath: "hello.txt" });
    const sha = await git.commit({ fs, dir, message: "first", author });
    await git.addRemote({ fs, dir, remote: "origin", url });
    const pushed = await git.push({ fs, http, dir, remote: "origin", ref: "main", onAuth: onAuth(acme.token) });
    expect(pushed.ok).toBe(true);
    const commits = await client.listCommits({ path: { repo_id: repo.repo_id } });
    expect(commits.body.commits.map((c) => c.sha)).toEqual([sha]);

    const second = join(work, "second");
    await git.clone({ fs, http, dir: second, url, onAuth: onAuth(acme.token) });
    expect(fs.readFileSync(join(second, "hello.txt"), "utf8")).toBe("from isomorphic-git\n");
    await writeFile(join(dir, "more.txt"), "more\n");
    await git.add({ fs, dir, filepath: "more.txt" });
    const next = await git.commit({ fs, dir, message: "second", author });
    await git.push({ fs, http, dir, remote: "origin", ref: "main", onAuth: onAuth(acme.token) });
    const fetched = await git.fetch({ fs, http, dir: second, ref: "main", onAuth: onAuth(acme.token) });
    expect(fetched.fetchHead).toBe(next);
  });

  it("is refused a force push by protection, and another organization's repository", async () => {
    const { body: repo } = await client.createRepository({ body: { name: "iso-guarded" } });
    const url = `${gitUrl()}/${repo.repo_id}.git`;
    const dir = join(work, "guarded");
    await git.init({ fs, dir, defaultBranch: "main" });
    await writeFile(join(dir, "a.txt"), "a\n");
    await git.add({ fs, dir, filepath: "a.txt" });
    await git.commit({ fs, dir, message: "a", author });
    await git.addRemote({ fs, dir, remote: "origin", url });
    await git.push({ fs, http, dir, remote: "origin", ref: "main", onAuth: onAuth(acme.token) });
    await client.putProtectionRule({
      path: { repo_id: repo.repo_id },
      body: { branch_pattern: "main", block_force_push: true },
    });
    // A commit that does not descend from the pushed one.
    const orphan = await git.commit({ fs, dir, message: "orphan", author, parent: [], ref: "refs/heads/orphan" });
    const refused = await git
      .push({
        fs,
        http,
        dir,
        remote: "origin",
        ref: "orphan",
        remoteRef: "main",
        force: true,
        onAuth: onAuth(acme.token),
      })
      .then(
        (result) => result,
        (error: Error) => error,
      );
    expect(String(refused instanceof Error ? refused.message : JSON.stringify(refused))).toMatch(
      /pre-receive hook declined|declined/,
    );
    const { body: branches } = await client.listBranches({ path: { repo_id: repo.repo_id } });
    expect(branches.branches[0]!.sha).not.toBe(orphan);

    await expect(git.clone({ fs, http, dir: join(work, "foreign"), url, onAuth: onAuth(other.token) })).rejects.toThrow(
      /404/,
    );
  });
});
