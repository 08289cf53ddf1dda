import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { gitCli } from "./git-cli.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const gitUrl = (): string => inject("platformUrls").git!;

interface RepoDto {
  repo_id: string;
  org_slug: string;
  name: string;
  default_branch: string;
  size_bytes: number;
  pack_count: number;
  description?: string;
}

async function rest(method: string, path: string, key: string | undefined, body?: unknown) {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${gitUrl()}/api/v1${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe("the git gateway over smart HTTP", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let work: string;
  /** Runs the real git CLI with an empty HOME and no prompts; rejects on a non-zero exit. */
  const git = (args: string[], cwd = work, extra: NodeJS.ProcessEnv = {}) => gitCli(work)(args, cwd, extra);
  const wireUrl = (key: string | undefined, address: string) =>
    `${gitUrl().replace("http://", key ? `http://x:${key}@` : "http://")}/${address}.git`;

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("git"), createOrganization("git-other")]);
    work = await mkdtemp(join(tmpdir(), "git-e2e-"));
    await writeFile(join(work, ".gitconfig"), "[init]\n\tdefaultBranch = main\n[protocol]\n\tversion = 2\n");
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  async function createRepo(name: string): Promise<RepoDto> {
    const created = await rest("POST", "/repos", acme.token, { name, description: "kept nowhere" });
    expect(created.status).toBe(201);
    return (await created.json()) as RepoDto;
  }

  it("creates a repository, clones it empty, pushes, and clones it back by id and by name", async () => {
    const repo = await createRepo("app");
    expect(repo.description).toBe("kept nowhere");
    expect(repo.default_branch).toBe("main");
    expect(repo.org_slug).toBe(acme.name);
    const fetched = (await (await rest("GET", `/repos/${repo.repo_id}`, acme.token)).json()) as RepoDto;
    expect(fetched.description).toBeUndefined();
    const byName = await rest("GET", `/orgs/${acme.name}/repos/app`, acme.token);
    expect(((await byName.json()) as RepoDto).repo_id).toBe(repo.repo_id);
    expect((await rest("GET", `/orgs/${acme.name}/repos/app`, other.token)).status).toBe(404);
    const listed = (await (await rest("GET", "/repos", acme.token)).json()) as { repos: RepoDto[] };
    expect(listed.repos.map((r) => r.name)).toEqual(["app"]);
    expect((await rest("POST", "/repos", acme.token, { name: "app" })).status).toBe(409);
    expect((await rest("POST", "/repos", acme.token, { name: "../x" })).status).toBe(400);

    const url = wireUrl(acme.token, repo.repo_id);
    const { stderr } = await git(["clone", url, "empty"]);
    expect(stderr).toContain("empty repository");
    const dir = join(work, "empty");
    await writeFile(join(dir, "README.md"), "hello\n");
    await git(["add", "README.md"], dir);
    await git(["commit", "-m", "first"], dir);
    await writeFile(join(dir, "second.txt"), "two\n");
    await git(["add", "second.txt"], dir);
    await git(["commit", "-m", "second"], dir);
    await git(["push", "origin", "main"], dir);
    const head = (await git(["rev-parse", "HEAD"], dir)).stdout.trim();

    await git(["clone", wireUrl(acme.token, `${acme.name}/app`), "byname"]);
    expect((await git(["rev-parse", "HEAD"], join(work, "byname"))).stdout.trim()).toBe(head);
    // Shallow and partial clones.
    await git(["clone", "--depth", "1", url, "shallow"]);
    expect((await git(["rev-list", "--count", "HEAD"], join(work, "shallow"))).stdout.trim()).toBe("1");
    await git(["clone", "--filter=blob:none", url, "partial"]);
    expect((await git(["config", "remote.origin.partialclonefilter"], join(work, "partial"))).stdout.trim()).toBe(
      "blob:none",
    );
    // Protocol v0 and v2 both advertise the branch.
    for (const version of ["0", "2"]) {
      const listing = await git(["-c", `protocol.version=${version}`, "ls-remote", url]);
      expect(listing.stdout).toContain(`${head}\trefs/heads/main`);
    }
    // An atomic push of two refs, then a fetch sees them.
    await git(["push", "--atomic", "origin", "main:refs/heads/a", "main:refs/heads/b"], dir);
    await git(["fetch", "origin"], join(work, "byname"));
    expect((await git(["branch", "-r"], join(work, "byname"))).stdout).toContain("origin/b");
    const accounted = (await (await rest("GET", `/repos/${repo.repo_id}`, acme.token)).json()) as RepoDto;
    expect(accounted.size_bytes).toBeGreaterThan(0);
  });

  it("answers 401 with a Basic challenge, 403 without the grant and 404 across organizations", async () => {
    const repo = await createRepo("guarded");
    const infoRefs = `${gitUrl()}/${repo.repo_id}.git/info/refs?service=git-upload-pack`;
    const anonymous = await fetch(infoRefs);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`x:${key}`).toString("base64")}` });
    const owner = await fetch(infoRefs, { headers: basic(acme.token) });
    expect(owner.status).toBe(200);
    expect(owner.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    expect(owner.headers.get("cache-control")).toContain("no-cache");
    expect((await owner.text()).startsWith("001e# service=git-upload-pack\n0000")).toBe(true);
    expect((await fetch(infoRefs, { headers: basic(`dk_${"A".repeat(43)}`) })).status).toBe(401);
    expect((await fetch(infoRefs, { headers: basic(other.token) })).status).toBe(404);
    expect((await rest("GET", `/repos/${repo.repo_id}`, other.token)).status).toBe(404);

    const viewer = await acme.client.iam.createApiKey({ orgId: acme.id, name: "viewer", roles: ["git.viewer"] });
    const pushAdvert = `${gitUrl()}/${repo.repo_id}.git/info/refs?service=git-receive-pack`;
    expect((await fetch(infoRefs, { headers: basic(viewer.secret) })).status).toBe(200);
    expect((await fetch(pushAdvert, { headers: basic(viewer.secret) })).status).toBe(403);
    await expect(git(["clone", wireUrl(undefined, repo.repo_id), "anon"])).rejects.toThrow();
  });
});
