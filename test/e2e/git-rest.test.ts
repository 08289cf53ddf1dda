import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createGitClient, type GitClient } from "../../gen/openapi/git/client.js";
import { RestCallError } from "../../codegen/runtime/client/rest-call-error.js";
import { gitCli } from "./git-cli.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const run = promisify(execFile);
const gitUrl = (): string => inject("platformUrls").git!;

async function rest(method: string, path: string, key: string | undefined, body?: unknown) {
  const headers: Record<string, string> = key
    ? { authorization: `Basic ${Buffer.from(`x:${key}`).toString("base64")}` }
    : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${gitUrl()}/api/v1${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The status and body of a client call that must fail. */
async function failure(call: Promise<unknown>): Promise<{ status: number; body: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RestCallError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return { status: error.status, body: String(error.body) };
}

describe("the git control plane", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let client: GitClient;
  let work: string;
  let repoId: string;
  let first: string;
  let head: string;
  const git = (args: string[], cwd = work) => gitCli(work)(args, cwd);

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("gitrest"), createOrganization("gitrest-other")]);
    client = createGitClient({ baseUrl: gitUrl(), token: acme.token });
    work = await mkdtemp(join(tmpdir(), "git-rest-"));
    await writeFile(join(work, ".gitconfig"), "[init]\n\tdefaultBranch = main\n");
    const created = await client.createRepository({ body: { name: "browse" } });
    repoId = created.body.repo_id;
    // Content to browse: a text file, a binary file, a directory, then a rename.
    const dir = join(work, "browse");
    await git(["init", "-q", dir]);
    await writeFile(join(dir, "README.md"), "# Browse\n\nhello\n");
    await git(["-C", dir, "add", "."]);
    await git(["-C", dir, "commit", "-qm", "first"]);
    first = (await git(["-C", dir, "rev-parse", "HEAD"])).stdout.trim();
    await run("mkdir", ["-p", join(dir, "src/lib")]);
    await writeFile(join(dir, "src/lib/a.ts"), "export const a = 1;\n");
    await writeFile(join(dir, "logo.bin"), Buffer.from([0, 1, 2, 255, 0, 7]));
    await git(["-C", dir, "add", "."]);
    await git(["-C", dir, "commit", "-qm", "second\n\nwith a body"]);
    await git(["-C", dir, "mv", "README.md", "GUIDE.md"]);
    await git(["-C", dir, "commit", "-qm", "rename"]);
    head = (await git(["-C", dir, "rev-parse", "HEAD"])).stdout.trim();
    const remote = `${gitUrl().replace("http://", `http://x:${acme.token}@`)}/${repoId}.git`;
    await git(["-C", dir, "push", "-q", remote, "main", "main:refs/heads/feature/x", `${first}:refs/tags/v1`]);
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("lists branches and resolves refs", async () => {
    const branches = await client.listBranches({ path: { repo_id: repoId } });
    expect(branches.body.branches).toEqual([
      { name: "feature/x", sha: head, is_default: false },
      { name: "main", sha: head, is_default: true },
    ]);
    expect((await client.getRef({ path: { repo_id: repoId, ref: "refs/heads/main" } })).body).toEqual({
      ref: "refs/heads/main",
      sha: head,
    });
    expect((await client.getRef({ path: { repo_id: repoId, ref: "refs/tags/v1" } })).body.sha).toBe(first);
    expect((await failure(client.getRef({ path: { repo_id: repoId, ref: "refs/heads/none" } }))).status).toBe(404);
    const dotted = await rest("GET", `/repos/${repoId}/refs/${encodeURIComponent("refs/heads/../x")}`, acme.token);
    expect([dotted.status, dotted.text]).toEqual([400, expect.stringMatching(/^invalid argument: ref /)]);
  });

  it("reads trees, blobs and commits at a ref or the default branch", async () => {
    const root = await client.getTree({ path: { repo_id: repoId } });
    expect(root.body).toMatchObject({ ref: "refs/heads/main", sha: head, path: "" });
    expect(root.body.entries.map((e) => [e.name, e.kind])).toEqual([
      ["src", "dir"],
      ["GUIDE.md", "file"],
      ["logo.bin", "file"],
    ]);
    const lib = await client.getTree({ path: { repo_id: repoId }, query: { path: "src/lib", ref: "feature/x" } });
    expect(lib.body.entries).toEqual([{ name: "a.ts", kind: "file", size: 20 }]);
    const old = await client.getTree({ path: { repo_id: repoId }, query: { ref: first } });
    expect(old.body.entries.map((e) => e.name)).toEqual(["README.md"]);

    const text = await client.getBlob({ path: { repo_id: repoId }, query: { path: "GUIDE.md" } });
    expect(text.body).toMatchObject({
      encoding: "utf8",
      content: "# Browse\n\nhello\n",
      binary: false,
      truncated: false,
    });
    const binary = await client.getBlob({ path: { repo_id: repoId }, query: { path: "logo.bin" } });
    expect(binary.body).toMatchObject({ encoding: "base64", binary: true, size: 6 });
    expect(Buffer.from(binary.body.content, "base64")).toEqual(Buffer.from([0, 1, 2, 255, 0, 7]));
    const cut = await client.getBlob({ path: { repo_id: repoId }, query: { path: "GUIDE.md", max_bytes: 4 } });
    expect(cut.body).toMatchObject({ content: "# Br", truncated: true, size: 16 });

    const commits = await client.listCommits({ path: { repo_id: repoId } });
    expect(commits.body.commits.map((c) => c.subject)).toEqual(["rename", "second", "first"]);
    expect(commits.body.commits[1]).toMatchObject({
      author: "Ada",
      email: "ada@example.com",
      message: "second\n\nwith a body",
    });
    const one = await client.listCommits({ path: { repo_id: repoId }, query: { limit: 1 } });
    expect(one.body.commits).toHaveLength(1);
  });

  it("diffs two refs with renames, stats only and patches", async () => {
    const full = await client.getDiff({ path: { repo_id: repoId }, query: { from: first, to: "main" } });
    expect(full.body).toMatchObject({ base_sha: first, head_sha: head, truncated: false, total_additions: 1 });
    const byPath = Object.fromEntries(full.body.files.map((f) => [f.path, f]));
    expect(byPath["GUIDE.md"]).toMatchObject({ status: "renamed", old_path: "README.md" });
    expect(byPath["src/lib/a.ts"]).toMatchObject({
      status: "added",
      additions: 1,
      patch: expect.stringContaining("+export const a = 1;"),
    });
    expect(byPath["logo.bin"]).toMatchObject({ binary: true });
    const stats = await client.getDiff({
      path: { repo_id: repoId },
      query: { from: first, to: head, stats_only: true },
    });
    expect(stats.body.files.every((f) => f.patch === undefined)).toBe(true);
  });

  it("refuses hostile input with a 400 naming the field, never a 5xx", async () => {
    const cases: [string, RegExp][] = [
      [`/repos/${repoId}/blob?path=../../etc/passwd`, /path/],
      [`/repos/${repoId}/blob?path=/etc/passwd`, /path/],
      [`/repos/${repoId}/blob`, /path/],
      [`/repos/${repoId}/tree?path=src/../..`, /path/],
      [`/repos/${repoId}/commits?limit=100000`, /limit/],
      [`/repos/${repoId}/commits?limit=abc`, /limit/],
      [`/repos/${repoId}/commits?ref=main..feature`, /ref/],
      [`/repos/${repoId}/commits?ref=--output=/tmp/x`, /ref/],
      [`/repos/${repoId}/diff?from=${first}`, /to/],
      [`/repos/${repoId}/diff?from=a..b&to=main`, /from/],
      [`/repos/${repoId}/blob?path=GUIDE.md&max_bytes=0`, /max_bytes/],
    ];
    for (const [path, field] of cases) {
      const answer = await rest("GET", path, acme.token);
      expect([path, answer.status]).toEqual([path, 400]);
      expect(answer.text).toMatch(field);
    }
    for (const [path, body] of [
      ["/repos", "{not json"],
      ["/repos", { name: "ok", extra: 1 }],
      ["/repos", { name: "a/b" }],
      ["/repos", { name: "x.git" }],
      ["/repos", { name: "x", default_branch: "bad..name" }],
      [`/repos/${repoId}/visibility`, { visibility: "secret" }],
      [`/repos/${repoId}/default-branch`, { default_branch: "nope" }],
      [`/repos/${repoId}/protection`, { branch_pattern: "a..b" }],
      [`/repos/${repoId}/protection`, { branch_pattern: "main", required_approvals: -1 }],
    ] as const) {
      const method = path === "/repos" ? "POST" : "PUT";
      const answer = await rest(method, path, acme.token, body);
      expect([path, JSON.stringify(body), answer.status]).toEqual([path, JSON.stringify(body), 400]);
    }
    const missing = await rest("GET", `/repos/${repoId}/blob?path=nope.txt`, acme.token);
    expect([missing.status, missing.text]).toEqual([404, expect.stringMatching(/^not found: path /)]);
  });

  it("changes visibility and default branch as git.admin, and deletes", async () => {
    const { body: repo } = await client.createRepository({ body: { name: "settings", default_branch: "trunk" } });
    expect(repo).toMatchObject({ default_branch: "trunk", visibility: "private", size_limit_bytes: null });
    const empty = await client.listBranches({ path: { repo_id: repo.repo_id } });
    expect(empty.body.branches).toEqual([]);
    expect((await failure(client.getTree({ path: { repo_id: repo.repo_id } }))).status).toBe(404);
    const notYet = await failure(
      client.setDefaultBranch({ path: { repo_id: repo.repo_id }, body: { default_branch: "trunk" } }),
    );
    expect(notYet).toEqual({ status: 400, body: expect.stringMatching(/default_branch/) });

    const made = await client.setRepositoryVisibility({
      path: { repo_id: repo.repo_id },
      body: { visibility: "public" },
    });
    expect(made.body.visibility).toBe("public");
    // Public: another organization's key reads it, but cannot change it.
    expect((await rest("GET", `/repos/${repo.repo_id}`, other.token)).status).toBe(200);
    expect((await rest("DELETE", `/repos/${repo.repo_id}`, other.token)).status).toBe(404);
    const switched = await client.setDefaultBranch({
      path: { repo_id: repoId },
      body: { default_branch: "feature/x" },
    });
    expect(switched.body.default_branch).toBe("feature/x");
    const { stdout } = await run("git", [
      "ls-remote",
      "--symref",
      `${gitUrl().replace("http://", `http://x:${acme.token}@`)}/${repoId}.git`,
      "HEAD",
    ]);
    expect(stdout).toContain("ref: refs/heads/feature/x\tHEAD");
    await client.setDefaultBranch({ path: { repo_id: repoId }, body: { default_branch: "main" } });

    expect((await client.deleteRepository({ path: { repo_id: repo.repo_id } })).body).toEqual({ deleted: true });
    expect((await failure(client.getRepository({ path: { repo_id: repo.repo_id } }))).status).toBe(404);
    // The name is free again.
    const again = await client.createRepository({ body: { name: "settings" } });
    expect(again.body.repo_id).not.toBe(repo.repo_id);
  });

  it("upserts protection rules by pattern", async () => {
    const rule = { branch_pattern: "release/**", required_approvals: 2, block_force_push: true };
    const stored = await client.putProtectionRule({ path: { repo_id: repoId }, body: rule });
    expect(stored.body).toEqual({
      ...rule,
      require_green_checks: false,
      block_deletion: false,
      block_self_approval: false,
      dismiss_stale_approvals: false,
    });
    await client.putProtectionRule({ path: { repo_id: repoId }, body: { ...rule, required_approvals: 1 } });
    await client.putProtectionRule({
      path: { repo_id: repoId },
      body: { branch_pattern: "main", block_deletion: true },
    });
    const listed = await client.listProtectionRules({ path: { repo_id: repoId } });
    expect(listed.body.rules.map((r) => [r.branch_pattern, r.required_approvals])).toEqual([
      ["main", 0],
      ["release/**", 1],
    ]);
    await client.deleteProtectionRule({ path: { repo_id: repoId }, query: { branch_pattern: "main" } });
    expect((await client.listProtectionRules({ path: { repo_id: repoId } })).body.rules).toHaveLength(1);
    const gone = await failure(
      client.deleteProtectionRule({ path: { repo_id: repoId }, query: { branch_pattern: "main" } }),
    );
    expect(gone.status).toBe(404);
  });

  it("enforces roles: 401 with a challenge, 403 per tier, 404 across organizations on every route", async () => {
    const anonymous = await rest("GET", "/repos", undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(anonymous.text).toMatch(/^unauthorized: /);
    expect((await rest("GET", "/repos", `dk_${"A".repeat(43)}`)).status).toBe(401);

    const viewer = (await acme.client.iam.createApiKey({ orgId: acme.id, name: "v", roles: ["git.viewer"] })).secret;
    const editor = (await acme.client.iam.createApiKey({ orgId: acme.id, name: "e", roles: ["git.editor"] })).secret;
    expect((await rest("GET", `/repos/${repoId}/commits`, viewer)).status).toBe(200);
    expect((await rest("POST", "/repos", viewer, { name: "nope" })).status).toBe(403);
    expect((await rest("POST", "/repos", editor, { name: "by-editor" })).status).toBe(201);
    const admin = [
      ["PUT", `/repos/${repoId}/visibility`, { visibility: "public" }],
      ["PUT", `/repos/${repoId}/default-branch`, { default_branch: "main" }],
      ["PUT", `/repos/${repoId}/protection`, { branch_pattern: "x" }],
      ["DELETE", `/repos/${repoId}`, undefined],
    ] as const;
    for (const [method, path, body] of admin) {
      const answer = await rest(method, path, editor, body);
      expect([method, path, answer.status]).toEqual([method, path, 403]);
      expect(answer.text).toMatch(/^forbidden: .*git\.admin/);
    }
    const reads = [
      `/repos/${repoId}`,
      `/orgs/${acme.name}/repos/browse`,
      `/repos/${repoId}/branches`,
      `/repos/${repoId}/refs/${encodeURIComponent("refs/heads/main")}`,
      `/repos/${repoId}/tree`,
      `/repos/${repoId}/blob?path=GUIDE.md`,
      `/repos/${repoId}/commits`,
      `/repos/${repoId}/diff?from=${first}&to=${head}`,
      `/repos/${repoId}/protection`,
    ];
    for (const path of reads) {
      const answer = await rest("GET", path, other.token);
      expect([path, answer.status]).toEqual([path, 404]);
      expect(answer.text).not.toContain(acme.name);
    }
    for (const [method, path, body] of admin) expect((await rest(method, path, other.token, body)).status).toBe(404);
    expect((await rest("GET", "/repos", other.token)).text).not.toContain(repoId);
  });

  it("keeps SSH keys per API key: fingerprint, read-only, 409 on a duplicate, delete", async () => {
    await run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "ada@laptop", "-f", join(work, "key")]);
    const line = (await readFile(join(work, "key.pub"), "utf8")).trim();
    const printed = (await run("ssh-keygen", ["-l", "-E", "sha256", "-f", join(work, "key.pub")])).stdout.split(" ")[1];
    const added = await client.addSshKey({ body: { name: "laptop", public_key: line, read_only: true } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      name: "laptop",
      type: "ssh-ed25519",
      fingerprint: printed,
      read_only: true,
      last_used: null,
    });
    expect((await failure(client.addSshKey({ body: { name: "again", public_key: line } }))).status).toBe(409);
    const bad = await failure(client.addSshKey({ body: { name: "bad", public_key: "ssh-ed25519 AAAA" } }));
    expect(bad).toEqual({ status: 400, body: expect.stringMatching(/^invalid argument: public_key/) });
    expect((await client.listSshKeys()).body.keys.map((k) => k.id)).toEqual([added.body.id]);
    // Another key, even of the same organization, neither sees nor deletes it.
    expect(JSON.parse((await rest("GET", "/user/keys", other.token)).text)).toEqual({ keys: [] });
    expect((await rest("DELETE", `/user/keys/${added.body.id}`, other.token)).status).toBe(404);
    expect((await client.deleteSshKey({ path: { key_id: added.body.id } })).body).toEqual({ deleted: true });
    expect((await client.listSshKeys()).body.keys).toEqual([]);
  });
});
