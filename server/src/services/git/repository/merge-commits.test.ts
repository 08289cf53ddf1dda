import { afterAll, describe, expect, test } from "vitest";
import { buildSampleRepository, FixtureRepository } from "./fixture-repository.js";
import { mergeBase } from "./merge-base.js";
import { mergeCommits } from "./merge-commits.js";
import { updateRef } from "./update-ref.js";

const { repo, c2, c3, feature } = buildSampleRepository();
const gitDir = repo.gitDir;
const other = new FixtureRepository();
afterAll(() => {
  repo.remove();
  other.remove();
});
const author = { name: "Grace Hopper", email: "grace@example.com", time: new Date("2024-05-01T12:00:00Z") };

function show(format: string, revision: string): string {
  return repo.git("log", "-1", `--format=${format}`, revision);
}

describe("mergeCommits", () => {
  test("merge: a commit with both parents and the combined tree; no ref moves", async () => {
    const outcome = await mergeCommits(gitDir, {
      base: "main",
      head: "feature",
      method: "merge",
      author,
      message: "Merge feature",
    });
    if (!("sha" in outcome)) throw new Error("expected a merge");
    expect(show("%P", outcome.sha)).toBe(`${c3} ${feature}`);
    expect(show("%an <%ae> %aI|%cn|%B", outcome.sha)).toBe(
      "Grace Hopper <grace@example.com> 2024-05-01T12:00:00+00:00|Grace Hopper|Merge feature",
    );
    expect(repo.git("show", `${outcome.sha}:README.md`)).toBe("hello from main\nworld\nagain");
    expect(repo.git("show", `${outcome.sha}:feature.txt`)).toBe("a feature");
    expect(repo.git("rev-parse", "main")).toBe(c3);
  });

  test("squash: the same tree on one parent", async () => {
    const outcome = await mergeCommits(gitDir, {
      base: "main",
      head: "feature",
      method: "squash",
      author,
      message: "Feature (#1)",
    });
    if (!("sha" in outcome)) throw new Error("expected a squash");
    expect(show("%P|%s", outcome.sha)).toBe(`${c3}|Feature (#1)`);
    expect(repo.git("show", `${outcome.sha}:src/app.ts`)).toContain("feature = true");
  });

  test("rebase: each commit replayed onto base with its author and message, the merger as committer", async () => {
    const outcome = await mergeCommits(gitDir, {
      base: "main",
      head: "feature",
      method: "rebase",
      author,
      message: "",
    });
    if (!("sha" in outcome)) throw new Error("expected a rebase");
    const log = repo.git("log", "--format=%s|%an|%cn", `${c3}..${outcome.sha}`).split("\n");
    expect(log).toEqual(["Use the feature|Ada Lovelace|Grace Hopper", "Add the feature|Ada Lovelace|Grace Hopper"]);
    expect(show("%P", `${outcome.sha}~1`)).toBe(c3);
    expect(repo.git("show", `${outcome.sha}:README.md`)).toBe("hello from main\nworld\nagain");
    expect(repo.git("show", `${outcome.sha}:src/app.ts`)).toContain("feature = true");
    expect(repo.git("diff", "--stat", `${outcome.sha}~2`, outcome.sha)).toContain("2 files changed");
  });

  test("rebase drops a change base already has and keeps author dates with their zone", async () => {
    repo.checkout("again", c2).write({ "README.md": "hello from main\nworld\nagain\n" });
    repo.commit("Same greeting as main");
    repo.write({ "notes.txt": "notes\n" });
    repo.git("add", "--all");
    repo.git("commit", "--author=Zoned <z@example.com>", "--quiet", "--date=1700000000 +0200", "-m", "Add notes");
    repo.checkout("main");
    const outcome = await mergeCommits(gitDir, { base: "main", head: "again", method: "rebase", author, message: "" });
    if (!("sha" in outcome)) throw new Error("expected a rebase");
    expect(repo.git("log", "--format=%s", `${c3}..${outcome.sha}`)).toBe("Add notes");
    expect(repo.git("log", "-1", "--date=raw", "--format=%ad|%an", outcome.sha)).toBe("1700000000 +0200|Zoned");
  });

  test("rebase of a branch already contained in base answers base", async () => {
    expect(await mergeCommits(gitDir, { base: "main", head: c2, method: "rebase", author, message: "" })).toEqual({
      sha: c3,
    });
  });

  test.each(["merge", "squash", "rebase"] as const)(
    "%s: a conflict lists the files and writes no ref",
    async (method) => {
      const before = repo.git("for-each-ref");
      const outcome = await mergeCommits(gitDir, {
        base: "main",
        head: "clash",
        method,
        author,
        message: "Merge clash",
      });
      expect(outcome).toEqual({ conflicts: ["README.md"] });
      expect(repo.git("for-each-ref")).toBe(before);
    },
  );

  test("several conflicted files are all listed once, sorted", async () => {
    repo.checkout("clash2", c2).write({ "src/app.ts": "clash two\n", "README.md": "two\n", "docs/manual.md": "two\n" });
    repo.commit("clash two");
    repo.checkout("clash3", c2).write({ "src/app.ts": "clash three\n", "README.md": "three\n" });
    repo.git("rm", "--quiet", "docs/manual.md");
    repo.commit("clash three");
    repo.checkout("main");
    const outcome = await mergeCommits(gitDir, {
      base: "clash3",
      head: "clash2",
      method: "merge",
      author,
      message: "m",
    });
    expect(outcome).toEqual({ conflicts: ["README.md", "docs/manual.md", "src/app.ts"] });
    expect(
      await mergeCommits(gitDir, { base: "feature", head: "clash", method: "squash", author, message: "m" }),
    ).toHaveProperty("sha");
  });

  test("bad input is refused naming the field", async () => {
    const base = { base: "main", head: "feature", method: "merge" as const, author, message: "m" };
    await expect(mergeCommits(gitDir, { ...base, method: "octopus" as "merge" })).rejects.toMatchObject({
      field: "method",
    });
    await expect(
      mergeCommits(gitDir, { ...base, author: { name: "x\nparent 0", email: "a@b" } }),
    ).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "author",
    });
    await expect(mergeCommits(gitDir, { ...base, author: { name: "x", email: "<a@b>" } })).rejects.toMatchObject({
      field: "author",
    });
    await expect(mergeCommits(gitDir, { ...base, message: " " })).rejects.toMatchObject({ field: "message" });
    await expect(mergeCommits(gitDir, { ...base, message: "a\u0000b" })).rejects.toMatchObject({ field: "message" });
    await expect(mergeCommits(gitDir, { ...base, head: "-p" })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "head",
    });
    await expect(mergeCommits(gitDir, { ...base, base: "gone" })).rejects.toMatchObject({
      kind: "not_found",
      field: "base",
    });
  });
});

describe("mergeBase", () => {
  test("the common ancestor, or nothing for unrelated histories", async () => {
    expect(await mergeBase(gitDir, "main", "feature")).toBe(c2);
    const orphan = repo.git("commit-tree", "-m", "orphan", `${c2}^{tree}`);
    expect(await mergeBase(gitDir, "main", orphan)).toBeUndefined();
  });

  test("unrelated histories cannot be merged", async () => {
    const orphan = repo.git("commit-tree", "-m", "orphan", `${c2}^{tree}`);
    await expect(
      mergeCommits(gitDir, { base: "main", head: orphan, method: "merge", author, message: "m" }),
    ).rejects.toMatchObject({
      kind: "conflict",
    });
  });
});

describe("updateRef", () => {
  test("moves a branch from the expected commit, and refuses a stale expectation", async () => {
    const outcome = await mergeCommits(gitDir, {
      base: "main",
      head: "feature",
      method: "merge",
      author,
      message: "m",
    });
    if (!("sha" in outcome)) throw new Error("expected a merge");
    await updateRef(gitDir, "refs/heads/main", outcome.sha, c3);
    expect(repo.git("rev-parse", "main")).toBe(outcome.sha);
    // A second merge computed against the old tip loses the race.
    await expect(updateRef(gitDir, "refs/heads/main", feature, c3)).rejects.toMatchObject({ kind: "conflict" });
    expect(repo.git("rev-parse", "main")).toBe(outcome.sha);
  });

  test("creates a ref only when asked to expect none", async () => {
    await updateRef(gitDir, "refs/heads/created", c2, null);
    expect(repo.git("rev-parse", "created")).toBe(c2);
    await expect(updateRef(gitDir, "refs/heads/created", c3, null)).rejects.toMatchObject({ kind: "conflict" });
  });

  test("refuses short names, bad ids and objects that are not commits", async () => {
    await expect(updateRef(gitDir, "main", c2, c3)).rejects.toMatchObject({ kind: "invalid_argument", field: "ref" });
    await expect(updateRef(gitDir, "refs/heads/x..y", c2, null)).rejects.toMatchObject({ field: "ref" });
    await expect(updateRef(gitDir, "refs/heads/x", "abc", null)).rejects.toMatchObject({ field: "newSha" });
    await expect(updateRef(gitDir, "refs/heads/x", c2, "HEAD")).rejects.toMatchObject({ field: "expectedOldSha" });
    const tree = repo.git("rev-parse", `${c2}^{tree}`);
    await expect(updateRef(gitDir, "refs/heads/x", tree, null)).rejects.toMatchObject({
      kind: "not_found",
      field: "newSha",
    });
    await expect(updateRef(gitDir, "refs/heads/x", "0".repeat(40), null)).rejects.toMatchObject({ kind: "not_found" });
  });
});
