import { isGreen, type CheckRollup } from "../checks/check-rollup.js";

/** The fields of a branch protection rule that gate a pull request's merge. */
export interface MergeRule {
  readonly requiredApprovals?: number | null;
  readonly requireGreenChecks?: boolean | null;
  readonly blockSelfApproval?: boolean | null;
  readonly dismissStaleApprovals?: boolean | null;
}

export type ReviewState = "approve" | "request_changes" | "comment";

export interface GateReview {
  /** The principal that reviewed. */
  readonly reviewer: string;
  readonly state: ReviewState;
  /** The head commit the review was given on. */
  readonly commitSha: string;
}

export interface MergeGate {
  /** Distinct reviewers whose standing review approves (after the rule's exclusions). */
  readonly approvals: number;
  /** Why the merge is refused; empty when it may proceed. Stable, human-readable strings. */
  readonly blockers: string[];
}

/**
 * What the base branch's rule asks before a merge, in the way GitHub's required reviews work:
 * each reviewer's latest approve or request_changes review stands (comments change nothing);
 * `dismiss_stale_approvals` only counts approvals given on the current head; `block_self_approval`
 * never counts the author's own; an outstanding request for changes blocks while reviews are
 * required; `require_green_checks` needs the head's rollup to be green (`none` is not).
 */
export function evaluateMergeGate(input: {
  readonly rule: MergeRule | undefined;
  readonly author: string;
  readonly headSha: string;
  /** Oldest first. */
  readonly reviews: readonly GateReview[];
  readonly rollup: CheckRollup;
}): MergeGate {
  const { rule, author, headSha, reviews, rollup } = input;
  const standing = new Map<string, GateReview>();
  for (const review of reviews) {
    if (review.state === "comment") continue;
    if (rule?.dismissStaleApprovals && review.commitSha !== headSha) {
      // A stale review no longer stands; an older decision of the same reviewer does not come back.
      if (standing.get(review.reviewer)?.commitSha !== headSha) standing.delete(review.reviewer);
      continue;
    }
    standing.set(review.reviewer, review);
  }
  let approvals = 0;
  let changesRequested = false;
  for (const review of standing.values()) {
    if (review.state === "request_changes") changesRequested = true;
    else if (!(rule?.blockSelfApproval && review.reviewer === author)) approvals++;
  }
  const blockers: string[] = [];
  const required = rule?.requiredApprovals ?? 0;
  if (approvals < required) blockers.push(`approvals: ${approvals} of ${required} required`);
  if (required > 0 && changesRequested) blockers.push("changes_requested: a reviewer requested changes");
  if (rule?.requireGreenChecks && !isGreen(rollup)) blockers.push(`checks: head rollup is ${rollup}, not success`);
  return { approvals, blockers };
}
