import { describe, expect, it } from "vitest";
import { evaluateMergeGate, type GateReview, type MergeRule } from "./merge-gate.js";

const head = "h".repeat(40);
const old = "o".repeat(40);
const gate = (
  rule: MergeRule | undefined,
  reviews: GateReview[],
  rollup: Parameters<typeof evaluateMergeGate>[0]["rollup"] = "success",
) => evaluateMergeGate({ rule, author: "alice", headSha: head, reviews, rollup });

describe("merge gate", () => {
  it("lets anything through without a rule", () => {
    expect(gate(undefined, [], "failure")).toEqual({ approvals: 0, blockers: [] });
  });

  it("counts each reviewer's standing decision once", () => {
    const rule = { requiredApprovals: 2 };
    const reviews: GateReview[] = [
      { reviewer: "bob", state: "approve", commitSha: head },
      { reviewer: "bob", state: "approve", commitSha: head },
      { reviewer: "carol", state: "request_changes", commitSha: head },
    ];
    expect(gate(rule, reviews)).toEqual({
      approvals: 1,
      blockers: ["approvals: 1 of 2 required", "changes_requested: a reviewer requested changes"],
    });
    reviews.push({ reviewer: "carol", state: "comment", commitSha: head });
    expect(gate(rule, reviews).blockers).toContain("changes_requested: a reviewer requested changes");
    reviews.push({ reviewer: "carol", state: "approve", commitSha: head });
    expect(gate(rule, reviews)).toEqual({ approvals: 2, blockers: [] });
  });

  it("drops the author's approval under block_self_approval", () => {
    const reviews: GateReview[] = [{ reviewer: "alice", state: "approve", commitSha: head }];
    expect(gate({ requiredApprovals: 1 }, reviews).approvals).toBe(1);
    expect(gate({ requiredApprovals: 1, blockSelfApproval: true }, reviews)).toEqual({
      approvals: 0,
      blockers: ["approvals: 0 of 1 required"],
    });
  });

  it("ignores approvals of an older head under dismiss_stale_approvals", () => {
    const reviews: GateReview[] = [
      { reviewer: "bob", state: "approve", commitSha: old },
      { reviewer: "carol", state: "approve", commitSha: head },
    ];
    expect(gate({ requiredApprovals: 2 }, reviews).blockers).toEqual([]);
    expect(gate({ requiredApprovals: 2, dismissStaleApprovals: true }, reviews)).toEqual({
      approvals: 1,
      blockers: ["approvals: 1 of 2 required"],
    });
  });

  it("requires a green rollup under require_green_checks, and none is not green", () => {
    const rule = { requireGreenChecks: true };
    expect(gate(rule, [], "success").blockers).toEqual([]);
    expect(gate(rule, [], "pending").blockers).toEqual(["checks: head rollup is pending, not success"]);
    expect(gate(rule, [], "none").blockers).toEqual(["checks: head rollup is none, not success"]);
    expect(gate(rule, [], "failure").blockers).toHaveLength(1);
  });
});
