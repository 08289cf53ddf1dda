import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { createGitClient, type GitClient } from "../../gen/openapi/git/client.js";
import { gitCli } from "./git-cli.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

const gitUrl = (): string => inject("platformUrls").git!;

async function rest(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${gitUrl()}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": typeof body === "string" ? "text/plain" : "application/json" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

describe("pull requests, checks and CI secrets", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let client: GitClient;
  let reviewerKey: string;
  let work: string;
  let repoId: string;
  let dir: string;

  const git = (args: string[], cwd = dir) => gitCli(work)(args, cwd);
  /** A branch from main with one commit writing `file`, pushed; answers its head. */
  async function pushBranch(branch: string, file: string, content: string): Promise<string> {
    await git(["checkout", "-q", "-B", branch, "origin/main"]);
    await writeFile(join(dir, file), content);
    await git(["add", "."]);
    await git(["commit", "-qm", `${branch}: ${file}`]);
    await git(["push", "-q", "--force", "origin", branch]);
    return (await git(["rev-parse", "HEAD"])).stdout.trim();
  }
  const openPull = async (head: string, title = head) =>
    (await client.createPullRequest({ path: { repo_id: repoId }, body: { title, head } })).body;

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("gitcollab"), createOrganization("gitcollab-other")]);
    client = createGitClient({ baseUrl: gitUrl(), token: acme.token });
    reviewerKey = (await acme.client.iam.createApiKey({ orgId: acme.id, name: "reviewer", roles: ["git.editor"] }))
      .secret;
    work = await mkdtemp(join(tmpdir(), "git-collab-"));
    await writeFile(join(work, ".gitconfig"), "[init]\n\tdefaultBranch = main\n");
    repoId = (await client.createRepository({ body: { name: "collab" } })).body.repo_id;
    dir = join(work, "collab");
    await git(["clone", "-q", `${gitUrl().replace("http://", `http://x:${acme.token}@`)}/${repoId}.git`, dir], work);
    await writeFile(join(dir, "shared.txt"), "line one\n");
    await git(["add", "."]);
    await git(["commit", "-qm", "base"]);
    await git(["push", "-q", "origin", "main"]);
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("opens, reviews and merges a pull request under the base branch's protection", async () => {
    const head = await pushBranch("feature", "feature.txt", "new\n");
    const pull = await openPull("feature", "Add a feature");
    expect(pull).toMatchObject({
      number: 1,
      state: "open",
      base: "main",
      head_sha: head,
      mergeable: true,
      merge_blockers: [],
    });
    // A listing runs no trial merge: mergeability is on the single read only.
    const listed = await client.listPullRequests({ path: { repo_id: repoId } });
    expect(listed.body.pulls[0]).toMatchObject({ number: 1, head_sha: head });
    expect(listed.body.pulls[0]!.mergeable).toBeUndefined();
    const diff = await client.getPullRequestDiff({ path: { repo_id: repoId, number: 1 } });
    expect(diff.body.files.map((f) => [f.path, f.status])).toEqual([["feature.txt", "added"]]);

    await client.putProtectionRule({
      path: { repo_id: repoId },
      body: { branch_pattern: "main", required_approvals: 1, require_green_checks: true, block_self_approval: true },
    });
    const gated = (await client.getPullRequest({ path: { repo_id: repoId, number: 1 } })).body;
    expect(gated.merge_blockers).toEqual(["approvals: 0 of 1 required", "checks: head rollup is none, not success"]);
    // The author's own approval does not count; another key's does.
    await client.createPullRequestReview({ path: { repo_id: repoId, number: 1 }, body: { state: "approve" } });
    const stale = await rest("POST", `/repos/${repoId}/pulls/1/reviews`, reviewerKey, {
      state: "approve",
      commit_sha: "0".repeat(40),
    });
    expect([stale.status, stale.text]).toEqual([409, expect.stringMatching(/^conflict: commit_sha /)]);
    expect((await rest("POST", `/repos/${repoId}/pulls/1/reviews`, reviewerKey, { state: "approve" })).status).toBe(
      201,
    );
    const blocked = await rest("POST", `/repos/${repoId}/pulls/1/merge`, acme.token, { expected_head_sha: head });
    expect([blocked.status, blocked.text]).toEqual([
      409,
      "conflict: blocked: checks: head rollup is none, not success",
    ]);

    // A check on the head, its log, and its completion.
    const { body: check } = await client.createCheck({
      path: { repo_id: repoId },
      body: { head_sha: head, name: "build", status: "in_progress" },
    });
    const first = await rest("POST", `/repos/${repoId}/checks/${check.id}/logs`, acme.token, "compiling\n");
    expect(JSON.parse(first.text)).toEqual({ offset: 0, log_bytes: 10 });
    await rest("POST", `/repos/${repoId}/checks/${check.id}/logs`, acme.token, "linking\n");
    await client.updateCheck({
      path: { repo_id: repoId, check_id: check.id },
      body: { status: "completed", conclusion: "success" },
    });
    const rolled = await client.listCommitChecks({ path: { repo_id: repoId, sha: head } });
    expect(rolled.body.rollup).toBe("success");
    expect((await rest("GET", `/repos/${repoId}/checks/${check.id}/logs`, acme.token)).text).toBe(
      "compiling\nlinking\n",
    );

    const wrongHead = await rest("POST", `/repos/${repoId}/pulls/1/merge`, acme.token, {
      expected_head_sha: "a".repeat(40),
    });
    expect([wrongHead.status, wrongHead.text]).toEqual([
      409,
      expect.stringMatching(/^conflict: expected_head_sha is stale/),
    ]);
    // Two merges of the same pull request at once: exactly one wins.
    const both = await Promise.all(
      [1, 2].map(() =>
        rest("POST", `/repos/${repoId}/pulls/1/merge`, acme.token, { expected_head_sha: head, method: "squash" }),
      ),
    );
    expect(both.map((b) => b.status).sort()).toEqual([200, 409]);
    const merged = JSON.parse(both.find((b) => b.status === 200)!.text) as { sha: string; method: string };
    expect(merged.method).toBe("squash");
    const done = (await client.getPullRequest({ path: { repo_id: repoId, number: 1 } })).body;
    expect(done).toMatchObject({
      state: "merged",
      merge_commit_sha: merged.sha,
      merge_method: "squash",
      head_sha: head,
    });
    const { body: branches } = await client.listBranches({ path: { repo_id: repoId } });
    expect(branches.branches.find((b) => b.name === "main")!.sha).toBe(merged.sha);
    await client.deleteProtectionRule({ path: { repo_id: repoId }, query: { branch_pattern: "main" } });
  });

  it("answers a conflict with the typed body listing the files, and merges with each method", async () => {
    await pushBranch("left", "shared.txt", "left\n");
    await pushBranch("right", "shared.txt", "right\n");
    const left = await openPull("left");
    const right = await openPull("right");
    await client.mergePullRequest({
      path: { repo_id: repoId, number: left.number },
      body: { expected_head_sha: left.head_sha },
    });
    const now = (await client.getPullRequest({ path: { repo_id: repoId, number: right.number } })).body;
    expect(now).toMatchObject({ mergeable: false, conflicting_files: ["shared.txt"] });
    const conflict = await rest("POST", `/repos/${repoId}/pulls/${right.number}/merge`, acme.token, {
      expected_head_sha: right.head_sha,
    });
    expect(conflict.status).toBe(409);
    expect(conflict.type).toContain("application/json");
    expect(JSON.parse(conflict.text)).toEqual({ error: "merge_conflict", conflicting_files: ["shared.txt"] });
    await client.updatePullRequest({ path: { repo_id: repoId, number: right.number }, body: { state: "closed" } });

    const rebased = await pushBranch("rebased", "r.txt", "r\n");
    const pull = await openPull("rebased");
    const result = await client.mergePullRequest({
      path: { repo_id: repoId, number: pull.number },
      body: { expected_head_sha: rebased, method: "rebase" },
    });
    expect(result.body.method).toBe("rebase");
    const open = await client.listPullRequests({ path: { repo_id: repoId } });
    expect(open.body.pulls).toEqual([]);
    const all = await client.listPullRequests({ path: { repo_id: repoId }, query: { state: "all", page_size: 2 } });
    expect(all.body.total_count).toBe(4);
    expect(all.body.pulls.map((p) => p.number)).toEqual([4, 3]);
    await client.createPullRequestComment({
      path: { repo_id: repoId, number: pull.number },
      body: { body: "shipped" },
    });
    const comments = await client.listPullRequestComments({ path: { repo_id: repoId, number: pull.number } });
    expect(comments.body.comments.map((c) => c.body)).toEqual(["shipped"]);
  });

  it("tails a check's log live as text/event-stream, resuming after Last-Event-ID", async () => {
    const head = (await git(["rev-parse", "origin/main"])).stdout.trim();
    const { body: check } = await client.createCheck({
      path: { repo_id: repoId },
      body: { head_sha: head, name: "tail" },
    });
    await rest("POST", `/repos/${repoId}/checks/${check.id}/logs`, acme.token, "one\n");
    const response = await fetch(`${gitUrl()}/api/v1/repos/${repoId}/checks/${check.id}/logs`, {
      headers: { authorization: `Bearer ${acme.token}`, accept: "text/event-stream" },
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const readUntil = async (needle: string) => {
      while (!seen.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += decoder.decode(value);
      }
    };
    await readUntil("data: one");
    await rest("POST", `/repos/${repoId}/checks/${check.id}/logs`, acme.token, "two\n");
    await readUntil("data: two");
    await client.updateCheck({
      path: { repo_id: repoId, check_id: check.id },
      body: { status: "completed", conclusion: "failure" },
    });
    await readUntil("\u0000never");
    expect(seen).toBe("id: 0\ndata: one\ndata: \n\nid: 4\ndata: two\ndata: \n\n");
    const resumed = await fetch(`${gitUrl()}/api/v1/repos/${repoId}/checks/${check.id}/logs`, {
      headers: { authorization: `Bearer ${acme.token}`, accept: "text/event-stream", "last-event-id": "0" },
    });
    expect(await resumed.text()).toBe("id: 4\ndata: two\ndata: \n\n");
    const foreign = await fetch(`${gitUrl()}/api/v1/repos/${repoId}/checks/${check.id}/logs`, {
      headers: { authorization: `Bearer ${other.token}`, accept: "text/event-stream" },
    });
    expect(foreign.status).toBe(404);
  });

  it("keeps CI secrets write-only at organization, repository and environment scope", async () => {
    const put = await client.putOrganizationCiSecret({ path: { name: "NPM_TOKEN" }, body: { value: "org-value" } });
    expect(put.body).toEqual({ name: "NPM_TOKEN", created_at: expect.any(String), updated_at: expect.any(String) });
    await client.putRepositoryCiSecret({ path: { repo_id: repoId, name: "NPM_TOKEN" }, body: { value: "repo-value" } });
    await client.putEnvironmentCiSecret({
      path: { repo_id: repoId, environment: "production", name: "DEPLOY_KEY" },
      body: { value: "env-value" },
    });
    for (const path of [
      "/ci/secrets",
      `/repos/${repoId}/ci/secrets`,
      `/repos/${repoId}/environments/production/ci/secrets`,
    ]) {
      const listed = await rest("GET", path, acme.token);
      expect(listed.status).toBe(200);
      expect(listed.text).not.toMatch(/value/);
    }
    const bad = await rest("PUT", `/repos/${repoId}/ci/secrets/lower`, acme.token, { value: "x" });
    expect([bad.status, bad.text]).toEqual([400, expect.stringMatching(/name/)]);
    const badEnv = await rest("PUT", `/repos/${repoId}/environments/..%2Fx/ci/secrets/OK`, acme.token, { value: "x" });
    expect(badEnv.status).toBe(400);
    expect((await rest("GET", "/ci/secrets", reviewerKey)).status).toBe(403);
    expect((await rest("PUT", `/repos/${repoId}/ci/secrets/X`, other.token, { value: "x" })).status).toBe(404);
    expect((await client.deleteRepositoryCiSecret({ path: { repo_id: repoId, name: "NPM_TOKEN" } })).body).toEqual({
      deleted: true,
    });
  });

  it("hides every collaboration route of a repository from another organization", async () => {
    for (const [method, path, body] of [
      ["GET", `/repos/${repoId}/pulls`, undefined],
      ["GET", `/repos/${repoId}/pulls/1`, undefined],
      ["GET", `/repos/${repoId}/pulls/1/diff`, undefined],
      ["GET", `/repos/${repoId}/pulls/1/reviews`, undefined],
      ["POST", `/repos/${repoId}/pulls`, { title: "x", head: "feature" }],
      ["POST", `/repos/${repoId}/pulls/1/merge`, { expected_head_sha: "a".repeat(40) }],
      ["POST", `/repos/${repoId}/checks`, { head_sha: "a".repeat(40), name: "x" }],
      ["GET", `/repos/${repoId}/commits/${"a".repeat(40)}/checks`, undefined],
    ] as const) {
      const answer = await rest(method, path, other.token, body);
      expect([method, path, answer.status]).toEqual([method, path, 404]);
    }
    const invalid = await rest("POST", `/repos/${repoId}/pulls`, acme.token, { title: "x", head: "nope" });
    expect([invalid.status, invalid.text]).toEqual([400, expect.stringMatching(/^invalid argument: head /)]);
    const same = await rest("POST", `/repos/${repoId}/pulls`, acme.token, { title: "x", head: "main" });
    expect(same.status).toBe(400);
    expect((await rest("GET", `/repos/${repoId}/pulls/999`, acme.token)).status).toBe(404);
    expect((await rest("GET", `/repos/${repoId}/checks/not-a-uuid`, acme.token)).status).toBe(404);
  });
});
