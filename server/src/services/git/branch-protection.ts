import { asc, eq } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { gitProtectionRules } from "./git-schema.js";

/**
 * Branch protection: rules keyed by a glob over branch names (without `refs/heads/`). `*` matches
 * any characters but `/` (one segment), `**` any characters including `/`, `?` one character but
 * `/`; everything else matches itself. A branch several rules match is held to all of them:
 * {@link effectiveRule} combines them strictly.
 */

export type ProtectionRuleRow = typeof gitProtectionRules.$inferSelect;

/** What a branch is held to, all rules matching it combined. */
export interface EffectiveRule {
  readonly requiredApprovals: number;
  readonly requireGreenChecks: boolean;
  readonly blockForcePush: boolean;
  readonly blockDeletion: boolean;
  readonly blockSelfApproval: boolean;
  readonly dismissStaleApprovals: boolean;
  /** The patterns that matched, for messages. */
  readonly patterns: readonly string[];
}

const MAX_PATTERN_LENGTH = 255;

/** Why a pattern cannot be a rule's, or undefined when it can. */
export function branchPatternProblem(pattern: string): string | undefined {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH)
    return `branch_pattern must be 1 to ${MAX_PATTERN_LENGTH} characters`;
  // What git refuses in a branch name can never match one; glob characters are allowed.
  const controlOrSpace = [...pattern].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f);
  if (controlOrSpace || /[~^:\\[]/.test(pattern) || pattern.includes(".."))
    return "branch_pattern may not hold spaces, control characters, `~ ^ : \\ [` or `..`";
  if (pattern.startsWith("/") || pattern.endsWith("/") || pattern.includes("//"))
    return "branch_pattern may not start or end with `/` or hold `//`";
  if (pattern.startsWith("refs/")) return "branch_pattern names branches without `refs/heads/` (`main`, `release/*`)";
  return undefined;
}

/** The pattern as a regular expression's source, anchored: what the push check in git's hook evaluates too. */
export function branchPatternSource(pattern: string): string {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return `^${source}$`;
}

const compiled = new Map<string, RegExp>();

export function branchMatches(pattern: string, branch: string): boolean {
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = new RegExp(branchPatternSource(pattern), "s");
    if (compiled.size > 10_000) compiled.clear();
    compiled.set(pattern, regex);
  }
  return regex.test(branch);
}

/** The rules matching `branch`, combined: the largest approval count, every flag any rule sets. */
export function effectiveRule(
  rules: readonly ProtectionRuleRow[] | readonly Omit<ProtectionRuleRow, "repoId" | "updatedAt">[],
  branch: string,
): EffectiveRule | undefined {
  const matching = rules.filter((rule) => branchMatches(rule.branchPattern, branch));
  if (matching.length === 0) return undefined;
  return {
    requiredApprovals: Math.max(...matching.map((r) => r.requiredApprovals)),
    requireGreenChecks: matching.some((r) => r.requireGreenChecks),
    blockForcePush: matching.some((r) => r.blockForcePush),
    blockDeletion: matching.some((r) => r.blockDeletion),
    blockSelfApproval: matching.some((r) => r.blockSelfApproval),
    dismissStaleApprovals: matching.some((r) => r.dismissStaleApprovals),
    patterns: matching.map((r) => r.branchPattern),
  };
}

export function listProtectionRules(db: Pick<Database, "select">, repoId: string): Promise<ProtectionRuleRow[]> {
  return db
    .select()
    .from(gitProtectionRules)
    .where(eq(gitProtectionRules.repoId, repoId))
    .orderBy(asc(gitProtectionRules.branchPattern));
}
