import { eq, sql } from "drizzle-orm";
import type { BlobStore } from "../../../blob/blob-store.js";
import { assertGitRole, GitAccessError, identifyGitCaller, type GitAccessOptions } from "../git-access.js";
import { gitRepositories } from "../git-schema.js";
import { findRepositoryById, findRepositoryByName } from "../repository-store.js";
import { createLfsHandler, type LfsAccess } from "./lfs-handler.js";

/** Largest LFS object the gateway stores. */
export const DEFAULT_LFS_MAX_OBJECT_BYTES = 5 * 1024 * 1024 * 1024;

/**
 * The LFS handler on the gateway's own tables and access rules: the same credentials and roles as
 * the smart HTTP wire (git.viewer to download, git.editor to upload, anonymous download of public
 * repositories), and `lfs_bytes` kept on the repository row.
 */
export function createGatewayLfsHandler(options: GitAccessOptions & { readonly blobs: BlobStore }) {
  return createLfsHandler({
    blobs: options.blobs,
    maxObjectBytes: DEFAULT_LFS_MAX_OBJECT_BYTES,
    authorize: async (authorization, ref, access): Promise<LfsAccess> => {
      try {
        const caller = await identifyGitCaller(options, authorization);
        const repo =
          ref.kind === "id"
            ? await findRepositoryById(options.db, ref.repoId)
            : await findRepositoryByName(options.db, ref.orgSlug, ref.name);
        // As on the wire: without a credential a missing repository asks for one, revealing nothing.
        if (!repo) throw new GitAccessError(caller.kind === "anonymous" ? 401 : 404, "repository not found");
        await assertGitRole(options, caller, repo, access === "write" ? "git.editor" : "git.viewer");
        return { ok: true, orgId: repo.orgId, repoId: repo.id };
      } catch (error) {
        if (error instanceof GitAccessError) return { ok: false, status: error.status, message: error.message };
        throw error;
      }
    },
    addLfsBytes: async (repoId, bytes) => {
      await options.db
        .update(gitRepositories)
        .set({ lfsBytes: sql`${gitRepositories.lfsBytes} + ${bytes}` })
        .where(eq(gitRepositories.id, repoId));
    },
  });
}
