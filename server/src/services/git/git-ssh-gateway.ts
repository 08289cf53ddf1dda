import type { Logger } from "../../log/logger.js";
import { assertGitRole, callerOfApiKey, GitAccessError, type GitAccessOptions } from "./git-access.js";
import { receivePackSetup } from "./push-policy/push-policy.js";
import { refreshRepositorySize } from "./repository-accounting.js";
import { findRepositoryById, findRepositoryByName, repositoryGitDir } from "./repository-store.js";
import { findSshKeyByFingerprint, touchSshKey } from "./ssh-keys.js";
import { loadOrCreateHostKey } from "./ssh/ssh-host-key.js";
import { startGitSshListener, type GitSshListener } from "./ssh/git-ssh-server.js";

/** What a refused SSH client prints: a missing repository and another organization's read alike. */
const NOT_FOUND = "repository not found, or this key may not use it";

/**
 * The git wire over SSH with the gateway's keys, roles and repositories: an uploaded key acts with
 * the roles of the API key it was uploaded with (and stops when that key is revoked), checked by
 * the same role check as HTTP. Answers the listener and the host key's fingerprint.
 */
export async function startGitSshGateway(
  options: GitAccessOptions & {
    readonly host: string;
    readonly port: number;
    readonly dataDir: string;
    readonly logger: Logger;
  },
): Promise<{ listener: GitSshListener; fingerprint: string }> {
  const { db, dataDir, logger } = options;
  const hostKey = await loadOrCreateHostKey(dataDir);
  const listener = await startGitSshListener(
    { host: options.host, port: options.port, hostKey },
    {
      findKey: (fingerprint) => findSshKeyByFingerprint(db, fingerprint),
      touchKey: (keyId) => touchSshKey(db, keyId),
      async authorize(key, ref, access) {
        const caller = await callerOfApiKey(db, key.principal);
        if (!caller) return { ok: false, message: "the API key this SSH key was uploaded with is revoked or expired" };
        const repo =
          ref.kind === "id"
            ? await findRepositoryById(db, ref.repoId)
            : await findRepositoryByName(db, ref.orgSlug, ref.name);
        if (!repo) return { ok: false, message: NOT_FOUND };
        try {
          await assertGitRole(options, caller, repo, access === "write" ? "git.editor" : "git.viewer");
        } catch (error) {
          if (!(error instanceof GitAccessError)) throw error;
          return { ok: false, message: error.status === 403 ? `forbidden: ${error.message}` : NOT_FOUND };
        }
        const gitDir = repositoryGitDir(dataDir, repo.orgId, repo.id);
        if (access === "read") return { ok: true, gitDir };
        return {
          ok: true,
          gitDir,
          ...(await receivePackSetup(db, repo)),
          onExit: () => refreshRepositorySize(db, repo.id, gitDir),
        };
      },
      log: (message, fields) => logger.warn(message, fields),
    },
  );
  return { listener, fingerprint: hostKey.fingerprint };
}
