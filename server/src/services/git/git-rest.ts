import { eq } from "drizzle-orm";
import type { NodeRequest, NodeResponse } from "../../transport/plane-handler.js";
import { validateRefName } from "./repository/index.js";
import { assertGitRole, GitAccessError, identifyGitCaller, type GitAccessOptions } from "./git-access.js";
import { gitRepositories } from "./git-schema.js";
import { createRepository, findRepositoryById, type RepositoryRow } from "./repository-store.js";
import { holdsRole } from "../../auth/roles.js";

export interface GitRestOptions extends GitAccessOptions {
  readonly dataDir: string;
}

/** A control-plane refusal answered as plain text: `invalid argument: ...`, `conflict: ...`. */
class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const MAX_BODY_BYTES = 64 * 1024;
const namePattern = /^[A-Za-z0-9._-]{1,100}$/;

function repositoryDto(repo: RepositoryRow, host: string | undefined) {
  return {
    repo_id: repo.id,
    org_id: repo.orgId,
    org_slug: repo.orgSlug,
    name: repo.name,
    state: "active",
    visibility: repo.visibility,
    default_branch: repo.defaultBranch,
    http_url: `http://${host ?? "localhost"}/${repo.id}.git`,
    size_bytes: repo.sizeBytes,
    pack_count: repo.packCount,
    lfs_bytes: repo.lfsBytes,
    size_limit_bytes: repo.sizeLimitBytes,
    pack_count_limit: repo.packCountLimit,
  };
}

async function readJson(req: NodeRequest): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RestError(413, "payload too large: the body exceeds 64 KiB");
    chunks.push(chunk as Buffer);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error();
    return value as Record<string, unknown>;
  } catch {
    throw new RestError(400, "invalid argument: the body must be a JSON object");
  }
}

function json(res: NodeResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The REST control plane (repositories so far), paths relative to /api/v1. */
export function createRestRoutes(options: GitRestOptions) {
  return async (req: NodeRequest, res: NodeResponse, path: string): Promise<void> => {
    try {
      const caller = await identifyGitCaller(options, req.headers.authorization);
      if (caller.kind === "anonymous") throw new GitAccessError(401, "authentication required");
      const host = req.headers.host;
      if (path === "/repos" && req.method === "GET") {
        const rows = await options.db
          .select()
          .from(gitRepositories)
          .where(eq(gitRepositories.orgId, caller.orgId))
          .orderBy(gitRepositories.name);
        return json(res, 200, { repos: rows.map((r) => repositoryDto({ ...r, orgSlug: caller.orgName }, host)) });
      }
      if (path === "/repos" && req.method === "POST") {
        if (!holdsRole(caller.roles, "git.editor"))
          throw new GitAccessError(403, "creating a repository needs git.editor");
        const body = await readJson(req);
        const name = body.name;
        if (typeof name !== "string" || !namePattern.test(name) || name.endsWith(".git"))
          throw new RestError(
            400,
            "invalid argument: name is required: 1 to 100 of [A-Za-z0-9._-], not ending in .git",
          );
        const branch = body.default_branch ?? "main";
        if (typeof branch !== "string") throw new RestError(400, "invalid argument: default_branch must be a string");
        try {
          validateRefName(`refs/heads/${branch}`);
        } catch {
          throw new RestError(400, `invalid argument: default_branch is not a valid branch name`);
        }
        let id: string;
        try {
          id = await createRepository(options.db, options.dataDir, {
            orgId: caller.orgId,
            name,
            defaultBranch: branch,
          });
        } catch (error) {
          if (String((error as { code?: unknown }).code ?? "") === "23505" || /unique|duplicate/i.test(String(error)))
            throw new RestError(409, `conflict: a repository named "${name}" exists`);
          throw error;
        }
        const repo = (await findRepositoryById(options.db, id))!;
        const description = typeof body.description === "string" ? { description: body.description } : {};
        return json(res, 201, { ...repositoryDto(repo, host), ...description });
      }
      const one = /^\/repos\/([^/]+)$/.exec(path);
      if (one && req.method === "GET") {
        const repo = await findRepositoryById(options.db, one[1]!);
        if (!repo) throw new RestError(404, "not found: repository");
        await assertGitRole(options, caller, repo, "git.viewer");
        return json(res, 200, repositoryDto(repo, host));
      }
      throw new RestError(404, "not found: no such route");
    } catch (error) {
      if (error instanceof RestError) {
        res.writeHead(error.status, { "content-type": "text/plain; charset=utf-8" });
        return void res.end(`${error.message}\n`);
      }
      throw error;
    }
  };
}
