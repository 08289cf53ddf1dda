/**
 * The combined state of every check on one commit, worst first. Modelled on GitHub's combined
 * status and Gitea's commit status: one failing check makes the commit red, a running one keeps
 * it pending, and only checks that ran and passed (or had nothing to say) make it green.
 *
 * Order, worst to best:
 *   failure > timed_out > cancelled > action_required > pending (queued or in_progress)
 *   > neutral > skipped > success
 * A commit with no checks at all rolls up to `none`, which is not green: a branch whose rule
 * requires green checks needs at least one check that succeeded.
 */

export const checkStatuses = ["queued", "in_progress", "completed"] as const;
export type CheckStatus = (typeof checkStatuses)[number];

export const checkConclusions = [
  "success",
  "failure",
  "neutral",
  "cancelled",
  "skipped",
  "timed_out",
  "action_required",
] as const;
export type CheckConclusion = (typeof checkConclusions)[number];

export type CheckRollup =
  "failure" | "timed_out" | "cancelled" | "action_required" | "pending" | "neutral" | "skipped" | "success" | "none";

/** Worst first; `none` is only the answer when there is nothing to rank. */
const rollupOrder: readonly CheckRollup[] = [
  "failure",
  "timed_out",
  "cancelled",
  "action_required",
  "pending",
  "neutral",
  "skipped",
  "success",
];

export interface RolledUpCheck {
  readonly status: CheckStatus;
  /** Set once the check completed; a completed check without one counts as neutral. */
  readonly conclusion: CheckConclusion | null;
}

/** The state a single check contributes to its commit's rollup. */
export function checkState(check: RolledUpCheck): CheckRollup {
  if (check.status !== "completed") return "pending";
  return check.conclusion ?? "neutral";
}

/** The worst state among the checks, or `none` when there are none. */
export function rollUpChecks(checks: readonly RolledUpCheck[]): CheckRollup {
  let worst = rollupOrder.length;
  for (const check of checks) worst = Math.min(worst, rollupOrder.indexOf(checkState(check)));
  return rollupOrder[worst] ?? "none";
}

/** Whether a commit counts as green for a rule requiring green checks. */
export function isGreen(rollup: CheckRollup): boolean {
  return rollup === "success" || rollup === "neutral" || rollup === "skipped";
}
