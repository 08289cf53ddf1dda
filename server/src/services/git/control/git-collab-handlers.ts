import { Code, ConnectError } from "@connectrpc/connect";
import type { GitContext, GitImplementation } from "../../../../../gen/openapi/git/handler.js";
import type { Check, PullRequest } from "../../../../../gen/openapi/git/types.js";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { Database } from "../../../db/database.js";
import { effectiveRule, listProtectionRules } from "../branch-protection.js";
import type { CheckLogSignals } from "../collab/checks/check-log-signals.js";
import { rollUpChecks } from "../collab/checks/check-rollup.js";
import { createCheckStore, type CheckRow } from "../collab/checks/check-store.js";
import { CiSecretInputError, validEnvironmentName, type CiSecretScope } from "../collab/ci-secrets/ci-secret-scope.js";
import { createCiSecretStore, type CiSecretMetadata } from "../collab/ci-secrets/ci-secret-store.js";
import { evaluateMergeGate } from "../collab/pulls/merge-gate.js";
import { mergePullRequest } from "../collab/pulls/merge-pull-request.js";
import { createPullRequestStore, type PullRequestRow } from "../collab/pulls/pull-request-store.js";
import { holdsRole } from "../../../auth/roles.js";
import { diff, mergeBase, mergeCommits, resolveRef, validateRefName } from "../repository/index.js";
import type { RepositoryRow } from "../repository-store.js";
import { gitCaller, type KeyCaller } from "./git-control-auth.js";

/** Largest log chunk one append takes. */
const LOG_CHUNK_MAX_BYTES = 1024 * 1024;

const iso = (ms: number) => new Date(ms).toISOString();
/** Check ids are UUIDs: anything else names no check (and never reaches the database). */
const isCheckId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
const checkNotFound = (id: string) => new ConnectError(`check ${id.slice(0, 64)}`, Code.NotFound);
const conflict = (message: string) => new ConnectError(message, Code.Aborted);
const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

type GitRole = "git.viewer" | "git.editor" | "git.admin";

export interface GitCollabOptions {
  readonly db: Database;
  readonly box: SecretBox;
  readonly signals: CheckLogSignals;
  /** The repository named in the path if the caller holds `role` on it (as the repository routes check it). */
  readonly repository: (
    context: GitContext,
    repoId: string,
    role: GitRole,
  ) => Promise<{ repo: RepositoryRow; gitDir: string }>;
}

export function checkDto(check: CheckRow): Check {
  return {
    id: check.id,
    head_sha: check.headSha,
    name: check.name,
    status: check.status,
    conclusion: check.conclusion,
    details_url: check.detailsUrl,
    output_summary: check.outputSummary,
    log_bytes: check.logBytes,
    created_at: iso(check.createdAt),
    updated_at: iso(check.updatedAt),
    ...(check.completedAt === null ? {} : { completed_at: iso(check.completedAt) }),
  };
}

const secretDto = (secret: CiSecretMetadata) => ({
  name: secret.name,
  created_at: iso(secret.createdAt),
  updated_at: iso(secret.updatedAt),
});

/** Who a merge commit is by: the API key that merged, under its organization. */
const mergerIdentity = (caller: KeyCaller) => ({
  name: `${caller.orgName} API key ${caller.keyId.slice(0, 8)}`,
  email: `${caller.keyId}@${caller.orgName}.keys.invalid`,
});

/** The control plane's operations on pull requests, checks and CI secrets. */
export type GitCollabOperations = Pick<
  GitImplementation,
  Extract<
    keyof GitImplementation,
    `${string}PullRequest${string}` | `${string}Check${string}` | `${string}CiSecret${string}`
  >
>;

/** Pull requests, checks and CI secrets on the git control plane. */
export function createGitCollabHandlers(options: GitCollabOptions): GitCollabOperations {
  const { db, repository } = options;
  const pulls = createPullRequestStore(db);
  const checks = createCheckStore(db);
  const secrets = createCiSecretStore(db, options.box);

  const branchSha = async (gitDir: string, branch: string) =>
    (await resolveRef(gitDir, `refs/heads/${branch}`))?.sha ?? "";

  async function requireBranch(gitDir: string, branch: string, field: string): Promise<string> {
    validateRefName(`refs/heads/${branch}`, field);
    const sha = await branchSha(gitDir, branch);
    if (!sha) throw invalid(`${field} ${JSON.stringify(branch)} is not a branch of the repository`);
    return sha;
  }

  async function pullOf(repo: RepositoryRow, number: number): Promise<PullRequestRow> {
    const pull = await pulls.get(repo.id, number);
    if (!pull) throw new ConnectError(`pull request #${number}`, Code.NotFound);
    return pull;
  }

  /** The merge gate of an open pull request at the head `headSha`, under its base branch's rules. */
  async function gateOf(repo: RepositoryRow, pull: PullRequestRow, headSha: string) {
    const rule = effectiveRule(await listProtectionRules(db, repo.id), pull.baseBranch);
    const rollup = rollUpChecks(await checks.listForCommit(repo.orgId, repo.id, headSha));
    const reviews = await pulls.listReviews(pull.id);
    const gate = evaluateMergeGate({
      rule,
      author: pull.author,
      headSha,
      reviews: reviews.map((r) => ({ reviewer: r.reviewer, state: r.state, commitSha: r.commitSha })),
      rollup,
    });
    return { ...gate, rollup };
  }

  /**
   * The pull request as the plane shows it. With `mergeability` (single reads and writes, not
   * lists: it takes a trial merge and the gate's queries) an open one also says whether it
   * merges and what its base branch's protection still asks.
   */
  async function pullDto(
    repo: RepositoryRow,
    gitDir: string,
    pull: PullRequestRow,
    mergeability = true,
  ): Promise<PullRequest> {
    const [headSha, baseSha] = await Promise.all([
      pull.state === "merged" ? Promise.resolve(pull.mergedHeadSha ?? "") : branchSha(gitDir, pull.headBranch),
      branchSha(gitDir, pull.baseBranch),
    ]);
    const dto: PullRequest = {
      number: pull.number,
      title: pull.title,
      body: pull.body,
      state: pull.state,
      head: pull.headBranch,
      base: pull.baseBranch,
      head_sha: headSha,
      base_sha: baseSha,
      author: pull.author,
      created_at: iso(pull.createdAt),
      updated_at: iso(pull.updatedAt),
      ...(pull.closedAt === null ? {} : { closed_at: iso(pull.closedAt) }),
      ...(pull.mergedAt === null ? {} : { merged_at: iso(pull.mergedAt) }),
      ...(pull.mergeCommitSha === null ? {} : { merge_commit_sha: pull.mergeCommitSha }),
      ...(pull.mergeMethod === null ? {} : { merge_method: pull.mergeMethod as PullRequest["merge_method"] }),
    };
    if (pull.state !== "open" || !mergeability) return dto;
    if (!headSha || !baseSha) return { ...dto, mergeable: null };
    const gate = await gateOf(repo, pull, headSha);
    // A trial merge writes objects only; no ref moves.
    const trial = await mergeCommits(gitDir, {
      base: baseSha,
      head: headSha,
      method: "merge",
      author: { name: "mergeability", email: "mergeability@localhost" },
      message: "mergeability",
    });
    return {
      ...dto,
      mergeable: !("conflicts" in trial),
      ...("conflicts" in trial ? { conflicting_files: trial.conflicts } : {}),
      approvals: gate.approvals,
      checks: gate.rollup,
      merge_blockers: gate.blockers,
    };
  }

  function ciScope(repoId: string | undefined, environment?: string): CiSecretScope {
    if (repoId === undefined) return { kind: "organization" };
    if (environment === undefined) return { kind: "repository", repoId };
    return { kind: "environment", repoId, environment: validEnvironmentName(environment) };
  }

  /** CI secret calls refuse bad names and values in the secrets' own words, as 400s. */
  async function withSecretInput<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CiSecretInputError) throw invalid(error.message);
      throw error;
    }
  }

  async function orgAdmin(context: GitContext) {
    const caller = gitCaller(context);
    if (!holdsRole(caller.roles, "git.admin"))
      throw new ConnectError("organization CI secrets need git.admin", Code.PermissionDenied);
    return caller;
  }

  return {
    async listPullRequests({ path, query }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.viewer");
      const { rows, total } = await pulls.list(
        repo.id,
        query.state ?? "open",
        query.page_size ?? 30,
        ((query.page ?? 1) - 1) * (query.page_size ?? 30),
      );
      const items = await Promise.all(rows.map((row) => pullDto(repo, gitDir, row, false)));
      return { status: 200, body: { pulls: items, total_count: total } };
    },

    async createPullRequest({ path, body }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.editor");
      const base = body.base ?? repo.defaultBranch;
      await requireBranch(gitDir, body.head, "head");
      await requireBranch(gitDir, base, "base");
      if (base === body.head) throw invalid("head and base must be different branches");
      const pull = await pulls.create({
        repoId: repo.id,
        title: body.title,
        body: body.body ?? "",
        headBranch: body.head,
        baseBranch: base,
        author: gitCaller(context).keyId,
      });
      return { status: 201, body: await pullDto(repo, gitDir, pull) };
    },

    async getPullRequest({ path }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.viewer");
      return { status: 200, body: await pullDto(repo, gitDir, await pullOf(repo, path.number)) };
    },

    async updatePullRequest({ path, body }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.editor");
      const pull = await pullOf(repo, path.number);
      if (pull.state === "merged") throw conflict(`pull request #${pull.number} is merged and cannot change`);
      if (body.base !== undefined) {
        await requireBranch(gitDir, body.base, "base");
        if (body.base === pull.headBranch) throw invalid("base must differ from the head branch");
      }
      const updated = await pulls.update(repo.id, pull.number, {
        ...(body.title === undefined ? {} : { title: body.title }),
        ...(body.body === undefined ? {} : { body: body.body }),
        ...(body.base === undefined ? {} : { baseBranch: body.base }),
        ...(body.state === undefined ? {} : { state: body.state }),
      });
      if (!updated) throw conflict(`pull request #${pull.number} was merged meanwhile`);
      return { status: 200, body: await pullDto(repo, gitDir, updated) };
    },

    async getPullRequestDiff({ path, query }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.viewer");
      const pull = await pullOf(repo, path.number);
      const head = pull.state === "merged" ? pull.mergedHeadSha : await branchSha(gitDir, pull.headBranch);
      const base = await branchSha(gitDir, pull.baseBranch);
      if (!head || !base) throw new ConnectError(`a branch of pull request #${pull.number} is gone`, Code.NotFound);
      const from = (await mergeBase(gitDir, base, head)) ?? base;
      return { status: 200, body: await diff(gitDir, { from, to: head, statsOnly: query.stats_only ?? false }) };
    },

    async listPullRequestReviews({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.viewer");
      const pull = await pullOf(repo, path.number);
      const reviews = (await pulls.listReviews(pull.id)).map((r) => ({
        id: r.id,
        reviewer: r.reviewer,
        state: r.state,
        commit_sha: r.commitSha,
        body: r.body,
        created_at: iso(r.createdAt),
      }));
      return { status: 200, body: { reviews } };
    },

    async createPullRequestReview({ path, body }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.editor");
      const pull = await pullOf(repo, path.number);
      if (pull.state !== "open") throw conflict(`pull request #${pull.number} is ${pull.state}`);
      const head = await branchSha(gitDir, pull.headBranch);
      if (!head) throw conflict(`the head branch ${pull.headBranch} is gone`);
      if (body.commit_sha !== undefined && body.commit_sha !== head)
        throw conflict(`commit_sha ${body.commit_sha} is not the head any more: the head is ${head}`);
      const review = await pulls.addReview({
        pullId: pull.id,
        reviewer: gitCaller(context).keyId,
        state: body.state,
        commitSha: head,
        body: body.body ?? "",
      });
      return {
        status: 201,
        body: {
          id: review.id,
          reviewer: review.reviewer,
          state: review.state,
          commit_sha: review.commitSha,
          body: review.body,
          created_at: iso(review.createdAt),
        },
      };
    },

    async listPullRequestComments({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.viewer");
      const pull = await pullOf(repo, path.number);
      const comments = (await pulls.listComments(pull.id)).map((c) => ({
        id: c.id,
        author: c.author,
        body: c.body,
        created_at: iso(c.createdAt),
      }));
      return { status: 200, body: { comments } };
    },

    async createPullRequestComment({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.editor");
      const pull = await pullOf(repo, path.number);
      const comment = await pulls.addComment({ pullId: pull.id, author: gitCaller(context).keyId, body: body.body });
      return {
        status: 201,
        body: { id: comment.id, author: comment.author, body: comment.body, created_at: iso(comment.createdAt) },
      };
    },

    async mergePullRequest({ path, body }, context) {
      const { repo, gitDir } = await repository(context, path.repo_id, "git.editor");
      const pull = await pullOf(repo, path.number);
      if (pull.state !== "open") throw conflict(`pull request #${pull.number} is ${pull.state}`);
      const method = body.method ?? "merge";
      const [headSha, baseSha] = await Promise.all([
        branchSha(gitDir, pull.headBranch),
        branchSha(gitDir, pull.baseBranch),
      ]);
      if (headSha !== body.expected_head_sha)
        throw conflict(`expected_head_sha is stale: the head of ${pull.headBranch} is ${headSha || "gone"}`);
      // The gate is evaluated at that head; the merge refuses a head moved since, and moves the
      // base only from the commit seen here.
      const gate = await gateOf(repo, pull, headSha);
      if (gate.blockers.length > 0) throw conflict(`blocked: ${gate.blockers.join("; ")}`);
      const outcome = await mergePullRequest(gitDir, {
        baseBranch: pull.baseBranch,
        headBranch: pull.headBranch,
        method,
        expectedHeadSha: body.expected_head_sha,
        ...(baseSha ? { expectedBaseSha: baseSha } : {}),
        author: mergerIdentity(gitCaller(context)),
        message: body.message ?? `Merge pull request #${pull.number}: ${pull.title}`,
      });
      switch (outcome.kind) {
        case "stale_head":
          throw conflict(`expected_head_sha is stale: the head of ${pull.headBranch} is ${outcome.headSha}`);
        case "base_moved":
          throw conflict(`the base branch ${pull.baseBranch} moved meanwhile (another merge or push): try again`);
        case "conflict":
          return {
            status: 409,
            contentType: "application/json",
            body: { error: "merge_conflict", conflicting_files: outcome.conflictingFiles },
          };
        case "merged":
          await pulls.markMerged(repo.id, pull.number, {
            method,
            sha: outcome.sha,
            headSha: body.expected_head_sha,
          });
          return { status: 200, body: { merged: true, sha: outcome.sha, method } };
      }
    },

    async createCheck({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.editor");
      const status = body.status ?? "queued";
      const check = await checks.create(repo.orgId, {
        repoId: repo.id,
        headSha: body.head_sha,
        name: body.name,
        status,
        conclusion: status === "completed" ? (body.conclusion ?? "neutral") : null,
        detailsUrl: body.details_url ?? null,
        outputSummary: body.output_summary ?? null,
      });
      await options.signals.changed(check.id);
      return { status: 201, body: checkDto(check) };
    },

    async getCheck({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.viewer");
      const check = isCheckId(path.check_id) ? await checks.get(repo.orgId, repo.id, path.check_id) : undefined;
      if (!check) throw checkNotFound(path.check_id);
      return { status: 200, body: checkDto(check) };
    },

    async updateCheck({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.editor");
      const completing = body.status === "completed";
      if (!isCheckId(path.check_id)) throw checkNotFound(path.check_id);
      const check = await checks.update(repo.orgId, repo.id, path.check_id, {
        ...(body.status === undefined ? {} : { status: body.status }),
        ...(body.conclusion !== undefined || completing ? { conclusion: body.conclusion ?? "neutral" } : {}),
        ...(body.details_url === undefined ? {} : { detailsUrl: body.details_url }),
        ...(body.output_summary === undefined ? {} : { outputSummary: body.output_summary }),
      });
      if (!check) throw checkNotFound(path.check_id);
      await options.signals.changed(check.id);
      return { status: 200, body: checkDto(check) };
    },

    async getCheckLog({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.viewer");
      const check = isCheckId(path.check_id) ? await checks.get(repo.orgId, repo.id, path.check_id) : undefined;
      if (!check) throw checkNotFound(path.check_id);
      const chunks = await checks.readLog(check.id, -1);
      return { status: 200, contentType: "text/plain", body: chunks.map((c) => c.text).join("") };
    },

    async appendCheckLog({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.editor");
      if (Buffer.byteLength(body, "utf8") > LOG_CHUNK_MAX_BYTES)
        throw invalid(`body: a log chunk is at most ${LOG_CHUNK_MAX_BYTES} bytes`);
      const chunk = isCheckId(path.check_id)
        ? await checks.appendLog(repo.orgId, repo.id, path.check_id, body)
        : undefined;
      if (!chunk) throw checkNotFound(path.check_id);
      await options.signals.changed(path.check_id);
      return {
        status: 200,
        body: { offset: chunk.offset, log_bytes: chunk.offset + Buffer.byteLength(chunk.text, "utf8") },
      };
    },

    async listCommitChecks({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.viewer");
      const rows = await checks.listForCommit(repo.orgId, repo.id, path.sha);
      return { status: 200, body: { sha: path.sha, rollup: rollUpChecks(rows), checks: rows.map(checkDto) } };
    },

    async listOrganizationCiSecrets(_input, context) {
      const caller = await orgAdmin(context);
      const listed = await secrets.list(caller.orgId, ciScope(undefined));
      return { status: 200, body: { secrets: listed.map(secretDto) } };
    },
    async putOrganizationCiSecret({ path, body }, context) {
      const caller = await orgAdmin(context);
      const stored = await withSecretInput(() => secrets.put(caller.orgId, ciScope(undefined), path.name, body.value));
      return { status: 200, body: secretDto(stored) };
    },
    async deleteOrganizationCiSecret({ path }, context) {
      const caller = await orgAdmin(context);
      if (!(await secrets.delete(caller.orgId, ciScope(undefined), path.name)))
        throw new ConnectError(`CI secret ${path.name.slice(0, 255)}`, Code.NotFound);
      return { status: 200, body: { deleted: true } };
    },

    async listRepositoryCiSecrets({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      const listed = await secrets.list(repo.orgId, ciScope(repo.id));
      return { status: 200, body: { secrets: listed.map(secretDto) } };
    },
    async putRepositoryCiSecret({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      const stored = await withSecretInput(() => secrets.put(repo.orgId, ciScope(repo.id), path.name, body.value));
      return { status: 200, body: secretDto(stored) };
    },
    async deleteRepositoryCiSecret({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      if (!(await secrets.delete(repo.orgId, ciScope(repo.id), path.name)))
        throw new ConnectError(`CI secret ${path.name.slice(0, 255)}`, Code.NotFound);
      return { status: 200, body: { deleted: true } };
    },

    async listEnvironmentCiSecrets({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      const scope = await withSecretInput(async () => ciScope(repo.id, path.environment));
      return { status: 200, body: { secrets: (await secrets.list(repo.orgId, scope)).map(secretDto) } };
    },
    async putEnvironmentCiSecret({ path, body }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      const stored = await withSecretInput(() =>
        secrets.put(repo.orgId, ciScope(repo.id, path.environment), path.name, body.value),
      );
      return { status: 200, body: secretDto(stored) };
    },
    async deleteEnvironmentCiSecret({ path }, context) {
      const { repo } = await repository(context, path.repo_id, "git.admin");
      const scope = await withSecretInput(async () => ciScope(repo.id, path.environment));
      if (!(await secrets.delete(repo.orgId, scope, path.name)))
        throw new ConnectError(`CI secret ${path.name.slice(0, 255)}`, Code.NotFound);
      return { status: 200, body: { deleted: true } };
    },
  };
}
