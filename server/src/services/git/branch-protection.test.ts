import { describe, expect, it } from "vitest";
import { branchMatches, branchPatternProblem, effectiveRule } from "./branch-protection.js";

const rule = (branchPattern: string, fields: Partial<Parameters<typeof effectiveRule>[0][number]> = {}) => ({
  branchPattern,
  requiredApprovals: 0,
  requireGreenChecks: false,
  blockForcePush: false,
  blockDeletion: false,
  blockSelfApproval: false,
  dismissStaleApprovals: false,
  ...fields,
});

describe("branch patterns", () => {
  it("matches * within a segment, ** across segments and ? one character", () => {
    expect(branchMatches("main", "main")).toBe(true);
    expect(branchMatches("main", "main2")).toBe(false);
    expect(branchMatches("release/*", "release/1.0")).toBe(true);
    expect(branchMatches("release/*", "release/1.0/hotfix")).toBe(false);
    expect(branchMatches("release/**", "release/1.0/hotfix")).toBe(true);
    expect(branchMatches("v?", "v1")).toBe(true);
    expect(branchMatches("v?", "v10")).toBe(false);
    expect(branchMatches("feat.x", "featyx")).toBe(false);
    expect(branchMatches("*", "a/b")).toBe(false);
    expect(branchMatches("**", "a/b")).toBe(true);
  });

  it("refuses patterns no branch can match, naming branch_pattern", () => {
    for (const bad of [
      "",
      "a b",
      "a..b",
      "refs/heads/main",
      "/main",
      "main/",
      "a//b",
      "x[ab]",
      "a~1",
      "x".repeat(256),
    ]) {
      expect(branchPatternProblem(bad), bad).toMatch(/branch_pattern/);
    }
    for (const good of ["main", "release/*", "**", "feature/**/wip", "v?.?"])
      expect(branchPatternProblem(good)).toBeUndefined();
  });

  it("holds a branch to every rule matching it", () => {
    const rules = [
      rule("main", { requiredApprovals: 1, blockForcePush: true }),
      rule("*", { requiredApprovals: 2, blockDeletion: true }),
      rule("release/**", { requireGreenChecks: true }),
    ];
    expect(effectiveRule(rules, "main")).toMatchObject({
      requiredApprovals: 2,
      blockForcePush: true,
      blockDeletion: true,
      requireGreenChecks: false,
      patterns: ["main", "*"],
    });
    expect(effectiveRule(rules, "release/2/x")).toMatchObject({ requireGreenChecks: true, requiredApprovals: 0 });
    expect(effectiveRule(rules, "feature/x")).toBeUndefined();
  });
});
