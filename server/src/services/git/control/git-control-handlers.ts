import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq } from "drizzle-orm";
import type { GitContext, GitImplementation } from "../../../../../gen/openapi/git/handler.js";
import type { ProtectionRule, Repository, SshKey } from "../../../../../gen/openapi/git/types.js";
import { holdsRole } from "../../../auth/roles.js";
import { isUniqueViolation } from "../../../db/sql-state.js";
import { branchPatternProblem, listProtectionRules, type ProtectionRuleRow } from "../branch-protection.js";
import { assertGitRole, type GitAccessOptions } from "../git-access.js";
import { gitProtectionRules } from "../git-schema.js";
import {
  diff,
  listBranches,
  listCommits,
  readBlob,
  readTree,
  requireRef,
  resolveRef,
  validateRefName,
} from "../repository/index.js";
import {
  createRepository,
  deleteRepository,
  findRepositoryById,
  findRepositoryByName,
  listRepositories,
  repositoryGitDir,
  setDefaultBranch,
  setRepositoryQuotas,
  setRepositoryVisibility,
  type RepositoryRow,
} from "../repository-store.js";
import { addSshKey, deleteSshKey, listSshKeys, type SshKeyRow } from "../ssh-keys.js";
import type { CheckLogSignals } from "../collab/checks/check-log-signals.js";
import { gitCaller } from "./git-control-auth.js";
import { createGitCollabHandlers } from "./git-collab-handlers.js";

export interface GitControlOptions extends GitAccessOptions {
  readonly dataDir: string;
  /** Wakes live tails of check logs, across processes. */
  readonly checkSignals: CheckLogSignals;
}

type GitRole = "git.viewer" | "git.editor" | "git.admin";

const iso = (ms: number) => new Date(ms).toISOString();

function repositoryDto(repo: RepositoryRow, context: GitContext): Repository {
  const host = context.requestHeader.get("host") ?? "localhost";
  return {
    repo_id: repo.id,
    org_id: repo.orgId,
    org_slug: repo.orgSlug,
    name: repo.name,
    state: "active",
    visibility: repo.visibility as Repository["visibility"],
    default_branch: repo.defaultBranch,
    http_url: `http://${host}/${repo.id}.git`,
    size_bytes: repo.sizeBytes,
    pack_count: repo.packCount,
    lfs_bytes: repo.lfsBytes,
    size_limit_bytes: repo.sizeLimitBytes,
    pack_count_limit: repo.packCountLimit,
  };
}

function ruleDto(rule: Omit<ProtectionRuleRow, "repoId" | "updatedAt">): Required<ProtectionRule> {
  return {
    branch_pattern: rule.branchPattern,
    required_approvals: rule.requiredApprovals,
    require_green_checks: rule.requireGreenChecks,
    block_force_push: rule.blockForcePush,
    block_deletion: rule.blockDeletion,
    block_self_approval: rule.blockSelfApproval,
    dismiss_stale_approvals: rule.dismissStaleApprovals,
  };
}

function keyDto(key: SshKeyRow): SshKey {
  return {
    id: key.id,
    name: key.name,
    type: key.keyType,
    fingerprint: key.fingerprint,
    last_used: key.lastUsedAt === null ? null : iso(key.lastUsedAt),
    read_only: key.readOnly,
    created_at: iso(key.createdAt),
  };
}

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/** The control plane's operations: repository rows and settings, and reads through the plumbing library. */
export function createGitControlHandlers(options: GitControlOptions): GitImplementation {
  const { db, dataDir } = options;

  /** The repository if the caller holds `role` on it; another organization's private one is not found. */
  async function repository(context: GitContext, repoId: string, role: GitRole): Promise<RepositoryRow> {
    const repo = await findRepositoryById(db, repoId);
    if (!repo) throw new ConnectError(`repository ${repoId.slice(0, 64)}`, Code.NotFound);
    await assertGitRole(options, gitCaller(context), repo, role);
    return repo;
  }

  /** The repository and its git directory, if the caller holds `role` on it. */
  async function withGitDir(context: GitContext, repoId: string, role: GitRole) {
    const repo = await repository(context, repoId, role);
    return { repo, gitDir: repositoryGitDir(dataDir, repo.orgId, repo.id) };
  }
  const readable = (context: GitContext, repoId: string) => withGitDir(context, repoId, "git.viewer");

  return {
    ...createGitCollabHandlers({ db, box: options.box, signals: options.checkSignals, repository: withGitDir }),

    async listGitRepositories(_input, context) {
      const rows = await listRepositories(db, gitCaller(context).orgId);
      return { status: 200, body: { repos: rows.map((row) => repositoryDto(row, context)) } };
    },

    async createRepository({ body }, context) {
      const caller = gitCaller(context);
      if (!holdsRole(caller.roles, "git.editor"))
        throw new ConnectError("creating a repository needs git.editor", Code.PermissionDenied);
      if (body.name.toLowerCase().endsWith(".git")) throw invalid("name must not end in .git");
      const branch = body.default_branch ?? "main";
      validateRefName(`refs/heads/${branch}`, "default_branch");
      let id: string;
      try {
        id = await createRepository(db, dataDir, {
          orgId: caller.orgId,
          name: body.name,
          defaultBranch: branch,
          sizeLimitBytes: body.size_limit_bytes ?? null,
          packCountLimit: body.pack_count_limit ?? null,
        });
      } catch (error) {
        if (isUniqueViolation(error))
          throw new ConnectError(`a repository named ${JSON.stringify(body.name)} exists`, Code.AlreadyExists);
        throw error;
      }
      const repo = (await findRepositoryById(db, id))!;
      const description = body.description === undefined ? {} : { description: body.description };
      return { status: 201, body: { ...repositoryDto(repo, context), ...description } };
    },

    async getRepository({ path }, context) {
      return { status: 200, body: repositoryDto(await repository(context, path.repo_id, "git.viewer"), context) };
    },

    async getRepositoryByName({ path }, context) {
      const repo = await findRepositoryByName(db, path.org_slug, path.name);
      if (!repo) throw new ConnectError(`repository ${path.org_slug}/${path.name}`, Code.NotFound);
      await assertGitRole(options, gitCaller(context), repo, "git.viewer");
      return { status: 200, body: repositoryDto(repo, context) };
    },

    async deleteRepository({ path }, context) {
      await deleteRepository(db, dataDir, await repository(context, path.repo_id, "git.admin"));
      return { status: 200, body: { deleted: true } };
    },

    async setRepositoryVisibility({ path, body }, context) {
      const repo = await repository(context, path.repo_id, "git.admin");
      await setRepositoryVisibility(db, repo.id, body.visibility);
      return { status: 200, body: repositoryDto({ ...repo, visibility: body.visibility }, context) };
    },

    async setRepositoryQuotas({ path, body }, context) {
      const repo = await repository(context, path.repo_id, "git.admin");
      const quotas = { sizeLimitBytes: body.size_limit_bytes, packCountLimit: body.pack_count_limit };
      await setRepositoryQuotas(db, repo.id, quotas);
      return { status: 200, body: repositoryDto({ ...repo, ...quotas }, context) };
    },

    async setDefaultBranch({ path, body }, context) {
      const repo = await repository(context, path.repo_id, "git.admin");
      const branch = body.default_branch;
      const ref = `refs/heads/${branch}`;
      validateRefName(ref, "default_branch");
      const gitDir = repositoryGitDir(dataDir, repo.orgId, repo.id);
      if ((await resolveRef(gitDir, ref, "default_branch"))?.ref !== ref)
        throw invalid(`default_branch ${JSON.stringify(branch)} is not a branch of the repository`);
      await setDefaultBranch(db, dataDir, repo, branch);
      return { status: 200, body: repositoryDto({ ...repo, defaultBranch: branch }, context) };
    },

    async listBranches({ path }, context) {
      const { repo, gitDir } = await readable(context, path.repo_id);
      return { status: 200, body: { branches: await listBranches(gitDir, repo.defaultBranch) } };
    },

    async getRef({ path }, context) {
      const { gitDir } = await readable(context, path.repo_id);
      return { status: 200, body: await requireRef(gitDir, path.ref) };
    },

    async getTree({ path, query }, context) {
      const { repo, gitDir } = await readable(context, path.repo_id);
      const ref = query.ref ?? repo.defaultBranch;
      return { status: 200, body: await readTree(gitDir, { ref, path: query.path ?? "" }) };
    },

    async getBlob({ path, query }, context) {
      const { repo, gitDir } = await readable(context, path.repo_id);
      const ref = query.ref ?? repo.defaultBranch;
      return { status: 200, body: await readBlob(gitDir, { ref, path: query.path, maxBytes: query.max_bytes }) };
    },

    async listCommits({ path, query }, context) {
      const { repo, gitDir } = await readable(context, path.repo_id);
      const ref = query.ref ?? repo.defaultBranch;
      return { status: 200, body: await listCommits(gitDir, { ref, limit: query.limit }) };
    },

    async getDiff({ path, query }, context) {
      const { gitDir } = await readable(context, path.repo_id);
      return {
        status: 200,
        body: await diff(gitDir, { from: query.from, to: query.to, statsOnly: query.stats_only ?? false }),
      };
    },

    async listProtectionRules({ path }, context) {
      const repo = await repository(context, path.repo_id, "git.viewer");
      return { status: 200, body: { rules: (await listProtectionRules(db, repo.id)).map(ruleDto) } };
    },

    async putProtectionRule({ path, body }, context) {
      const repo = await repository(context, path.repo_id, "git.admin");
      const problem = branchPatternProblem(body.branch_pattern);
      if (problem) throw invalid(problem);
      const rule = {
        branchPattern: body.branch_pattern,
        requiredApprovals: body.required_approvals ?? 0,
        requireGreenChecks: body.require_green_checks ?? false,
        blockForcePush: body.block_force_push ?? false,
        blockDeletion: body.block_deletion ?? false,
        blockSelfApproval: body.block_self_approval ?? false,
        dismissStaleApprovals: body.dismiss_stale_approvals ?? false,
      };
      await db
        .insert(gitProtectionRules)
        .values({ repoId: repo.id, ...rule })
        .onConflictDoUpdate({
          target: [gitProtectionRules.repoId, gitProtectionRules.branchPattern],
          set: { ...rule, updatedAt: Date.now() },
        });
      return { status: 200, body: ruleDto(rule) };
    },

    async deleteProtectionRule({ path, query }, context) {
      const repo = await repository(context, path.repo_id, "git.admin");
      const removed = await db
        .delete(gitProtectionRules)
        .where(and(eq(gitProtectionRules.repoId, repo.id), eq(gitProtectionRules.branchPattern, query.branch_pattern)))
        .returning({ pattern: gitProtectionRules.branchPattern });
      if (removed.length === 0)
        throw new ConnectError(`no rule for branch_pattern ${JSON.stringify(query.branch_pattern)}`, Code.NotFound);
      return { status: 200, body: { deleted: true } };
    },

    async listSshKeys(_input, context) {
      const caller = gitCaller(context);
      return { status: 200, body: { keys: (await listSshKeys(db, caller.orgId, caller.keyId)).map(keyDto) } };
    },

    async addSshKey({ body }, context) {
      const caller = gitCaller(context);
      const key = await addSshKey(
        db,
        { orgId: caller.orgId, principal: caller.keyId },
        { name: body.name, publicKey: body.public_key, readOnly: body.read_only },
      );
      return { status: 201, body: keyDto(key) };
    },

    async deleteSshKey({ path }, context) {
      const caller = gitCaller(context);
      if (!(await deleteSshKey(db, caller.orgId, caller.keyId, path.key_id)))
        throw new ConnectError(`SSH key ${path.key_id.slice(0, 64)}`, Code.NotFound);
      return { status: 200, body: { deleted: true } };
    },
  };
}
