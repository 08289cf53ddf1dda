import { ConnectError } from "@connectrpc/connect";
import { and, eq, like } from "drizzle-orm";
import { apiKeyOrgWideRoles, authenticate } from "../../auth/auth-interceptor.js";
import { AuthorizationHeaderError, readAuthorization } from "../../auth/authorization-header.js";
import { apiKeys, organizations, permissions } from "../../auth/auth-schema.js";
import type { CredentialCache } from "../../auth/credential-cache.js";
import { holdsRole } from "../../auth/roles.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import type { Database } from "../../db/database.js";
import type { RepositoryRow } from "./repository-store.js";

export interface GitAccessOptions {
  readonly db: Database;
  readonly credentials: CredentialCache;
  readonly box: SecretBox;
}

/** Who calls the gateway: an organization's API key, or nobody. */
export type GitCaller =
  | {
      readonly kind: "key";
      readonly orgId: string;
      readonly orgName: string;
      readonly keyId: string;
      readonly roles: ReadonlySet<string>;
    }
  | { readonly kind: "anonymous" };

/** A refusal every plane maps to its own answer: 401 (challenge), 403, or 404 (as if missing). */
export class GitAccessError extends Error {
  constructor(
    readonly status: 401 | 403 | 404,
    message: string,
  ) {
    super(message);
  }
}

/**
 * HTTP Basic with the API key as the password (any username) or `Bearer <dk_ key>`. Credentials
 * that are present but wrong are refused, never treated as anonymous.
 */
export async function identifyGitCaller(
  options: GitAccessOptions,
  authorization: string | undefined,
): Promise<GitCaller> {
  if (!authorization) return { kind: "anonymous" };
  let key: string;
  try {
    key = readAuthorization(authorization).secret;
  } catch (error) {
    if (error instanceof AuthorizationHeaderError) throw new GitAccessError(401, error.message);
    throw error;
  }
  try {
    const principal = await authenticate(options.db, `Bearer ${key}`, options.credentials, options.box);
    return { kind: "key", ...principal };
  } catch (error) {
    if (error instanceof ConnectError) throw new GitAccessError(401, error.rawMessage);
    throw error;
  }
}

/**
 * The caller behind an API key id, for credentials that stand for a key without carrying its
 * secret (an SSH key uploaded with it): undefined once the key is revoked or expired, so its SSH
 * keys stop working with it.
 */
export async function callerOfApiKey(db: Database, keyId: string): Promise<GitCaller | undefined> {
  const [row] = await db
    .select({
      orgId: apiKeys.orgId,
      orgName: organizations.name,
      state: apiKeys.state,
      expiresAt: apiKeys.expiresAt,
      roles: apiKeyOrgWideRoles,
    })
    .from(apiKeys)
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(eq(apiKeys.id, keyId));
  if (!row || row.state !== "active" || (row.expiresAt !== 0 && row.expiresAt <= Date.now())) return undefined;
  return { kind: "key", orgId: row.orgId, orgName: row.orgName, keyId, roles: new Set(row.roles) };
}

/** `drn:platform:git:{region}:{org}:repo/{repo_id}`, any region, org by slug or id. */
function grantsRepository(resource: string, repo: RepositoryRow): boolean {
  const match = /^drn:platform:git:[a-z0-9-]*:([^:\s/]+):repo\/([^\s/]+)$/.exec(resource);
  return !!match && (match[1] === repo.orgSlug || match[1] === repo.orgId) && match[2] === repo.id;
}

/**
 * Refuses `role` on `repo` unless the caller holds it: organization-wide or by a grant on the
 * repository's resource name. Public repositories are readable by anyone. Another organization's
 * repository is 404, as if it did not exist.
 */
export async function assertGitRole(
  options: GitAccessOptions,
  caller: GitCaller,
  repo: RepositoryRow,
  role: "git.viewer" | "git.editor" | "git.admin",
): Promise<void> {
  if (role === "git.viewer" && repo.visibility === "public") return;
  if (caller.kind === "anonymous") throw new GitAccessError(401, "authentication required");
  if (caller.orgId !== repo.orgId) throw new GitAccessError(404, "repository not found");
  if (holdsRole(caller.roles, role)) return;
  const grants = await options.db
    .select({ role: permissions.role, resource: permissions.resource })
    .from(permissions)
    .where(
      and(
        eq(permissions.orgId, repo.orgId),
        eq(permissions.principal, caller.keyId),
        like(permissions.resource, `%:repo/${repo.id}`),
      ),
    );
  const held = new Set(grants.filter((g) => grantsRepository(g.resource, repo)).map((g) => g.role));
  if (holdsRole(held, role)) return;
  throw new GitAccessError(403, `this API key lacks ${role} on the repository`);
}
