import { fileURLToPath } from "node:url";
import type { Database } from "../../../db/database.js";
import { branchPatternSource, listProtectionRules } from "../branch-protection.js";
import type { RepositoryRow } from "../repository-store.js";

/** Holds the `pre-receive` hook; git is pointed at it for every push, whatever the repository holds. */
const HOOKS_DIR = fileURLToPath(new URL("./hooks", import.meta.url));

/** What the hook reads from PLATFORM_PUSH_POLICY. */
export interface PushPolicy {
  readonly rules: readonly {
    readonly pattern: string;
    /** The pattern as an anchored regular expression over the branch name. */
    readonly regex: string;
    readonly requiredApprovals: number;
    readonly requireGreenChecks: boolean;
    readonly blockForcePush: boolean;
    readonly blockDeletion: boolean;
  }[];
  readonly sizeBytes: number;
  readonly sizeLimitBytes: number | null;
  readonly packCount: number;
  readonly packCountLimit: number | null;
}

/** How `git receive-pack` must run for `repo`: `-c` pairs and environment that install the push check. */
export interface ReceivePackSetup {
  readonly config: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export async function receivePackSetup(db: Database, repo: RepositoryRow): Promise<ReceivePackSetup> {
  const rules = await listProtectionRules(db, repo.id);
  // Nothing to check: no hook, and no Node.js start-up in the push.
  if (rules.length === 0 && repo.sizeLimitBytes === null && repo.packCountLimit === null)
    return { config: [], env: {} };
  const policy: PushPolicy = {
    rules: rules.map((rule) => ({
      pattern: rule.branchPattern,
      regex: branchPatternSource(rule.branchPattern),
      requiredApprovals: rule.requiredApprovals,
      requireGreenChecks: rule.requireGreenChecks,
      blockForcePush: rule.blockForcePush,
      blockDeletion: rule.blockDeletion,
    })),
    sizeBytes: repo.sizeBytes,
    sizeLimitBytes: repo.sizeLimitBytes,
    packCount: repo.packCount,
    packCountLimit: repo.packCountLimit,
  };
  return {
    // The hook directory is the server's: hooks never travel with a push, and no repository's own
    // hooks directory is ever used.
    config: [`core.hooksPath=${HOOKS_DIR}`],
    env: { PLATFORM_PUSH_POLICY: JSON.stringify(policy), PLATFORM_NODE: process.execPath },
  };
}
