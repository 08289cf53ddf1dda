import { afterAll, describe, expect, it } from "vitest";
import { FixtureRepository } from "../../repository/fixture-repository.js";
import { mergePullRequest, type MergePullRequestOptions } from "./merge-pull-request.js";

const fixtures: FixtureRepository[] = [];
afterAll(() => fixtures.forEach((fixture) => fixture.remove()));

/** main with one file, and `feature` branched from it with a commit of its own. */
function repositoryWithFeature(featureFiles: Record<string, string>, mainFiles?: Record<string, string>) {
  const fixture = new FixtureRepository();
  fixtures.push(fixture);
  fixture.write({ "README.md": "hello\n", "shared.txt": "base\n" }).commit("initial");
  fixture.checkout("feature", "main");
  const headSha = fixture.write(featureFiles).commit("feature work");
  fixture.checkout("main");
  if (mainFiles) fixture.write(mainFiles).commit("main moves on");
  return { fixture, headSha, baseSha: fixture.git("rev-parse", "main") };
}

const author = { name: "Merge Bot", email: "merge@example.com" };
const options = (headSha: string, method: MergePullRequestOptions["method"]): MergePullRequestOptions => ({
  baseBranch: "main",
  headBranch: "feature",
  method,
  expectedHeadSha: headSha,
  author,
  message: "Merge pull request #1 from feature",
});

describe("merge pull request", () => {
  it.each(["merge", "squash", "rebase"] as const)("moves the base branch by %s", async (method) => {
    const { fixture, headSha, baseSha } = repositoryWithFeature({ "feature.txt": "new\n" }, { "other.txt": "x\n" });
    const outcome = await mergePullRequest(fixture.gitDir, options(headSha, method));
    expect(outcome).toEqual({ kind: "merged", sha: expect.stringMatching(/^[0-9a-f]{40}$/), baseSha });
    const merged = outcome.kind === "merged" ? outcome.sha : "";
    expect(fixture.git("rev-parse", "main")).toBe(merged);
    expect(fixture.git("show", `${merged}:feature.txt`)).toBe("new");
    expect(fixture.git("show", `${merged}:other.txt`)).toBe("x");
    const parents = fixture.git("rev-list", "--parents", "-n", "1", merged).split(" ").slice(1);
    if (method === "merge") expect(parents).toEqual([baseSha, headSha]);
    else expect(parents).toHaveLength(1);
    if (method === "squash") expect(parents).toEqual([baseSha]);
    if (method === "rebase") expect(fixture.git("log", "-1", "--format=%s", merged)).toBe("feature work");
    else
      expect(fixture.git("log", "-1", "--format=%an|%s", merged)).toBe("Merge Bot|Merge pull request #1 from feature");
  });

  it("refuses a stale head without moving anything", async () => {
    const { fixture, headSha, baseSha } = repositoryWithFeature({ "feature.txt": "new\n" });
    const outcome = await mergePullRequest(fixture.gitDir, options("f".repeat(40), "merge"));
    expect(outcome).toEqual({ kind: "stale_head", headSha });
    expect(fixture.git("rev-parse", "main")).toBe(baseSha);
  });

  it("answers the conflicting files and leaves the base alone", async () => {
    const { fixture, headSha, baseSha } = repositoryWithFeature(
      { "shared.txt": "feature side\n", "README.md": "feature readme\n" },
      { "shared.txt": "main side\n", "README.md": "main readme\n" },
    );
    for (const method of ["merge", "squash", "rebase"] as const) {
      expect(await mergePullRequest(fixture.gitDir, options(headSha, method))).toEqual({
        kind: "conflict",
        conflictingFiles: ["README.md", "shared.txt"],
      });
    }
    expect(fixture.git("rev-parse", "main")).toBe(baseSha);
  });

  it("lets exactly one of two merges built on the same base win", async () => {
    const { fixture, headSha, baseSha } = repositoryWithFeature({ "feature.txt": "new\n" });
    const both = await Promise.all(
      (["merge", "squash"] as const).map((method) =>
        mergePullRequest(fixture.gitDir, { ...options(headSha, method), expectedBaseSha: baseSha }),
      ),
    );
    expect(both.map((outcome) => outcome.kind).sort()).toEqual(["base_moved", "merged"]);
    const winner = both.find((outcome) => outcome.kind === "merged");
    expect(fixture.git("rev-parse", "main")).toBe(winner?.kind === "merged" ? winner.sha : "");
    // A base that moved since the gate was evaluated is refused before any object is built.
    expect(await mergePullRequest(fixture.gitDir, { ...options(headSha, "merge"), expectedBaseSha: baseSha })).toEqual({
      kind: "base_moved",
    });
  });
});
