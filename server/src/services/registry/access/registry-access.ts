import { ConnectError } from "@connectrpc/connect";
import { authenticate } from "../../../auth/auth-interceptor.js";
import { AuthorizationHeaderError, readAuthorization } from "../../../auth/authorization-header.js";
import type { CredentialCache } from "../../../auth/credential-cache.js";
import { holdsRole } from "../../../auth/roles.js";
import type { SecretBox } from "../../../crypto/secret-box.js";
import type { Database } from "../../../db/database.js";
import { OciError } from "../oci/oci-error.js";
import type { RepositoryCache } from "../content/repository-cache.js";
import type { RepositoryAction } from "../oci/oci-route.js";
import type { RegistryCaller } from "./registry-caller.js";
import type { RegistryTokens } from "./registry-token.js";

export interface RegistryAccessOptions {
  readonly db: Database;
  readonly credentials: CredentialCache;
  readonly box: SecretBox;
  readonly tokens: RegistryTokens;
  /** Repositories resolved before, kept in step with their changes. */
  readonly repositories: RepositoryCache;
}

/** The least role each action needs in the repository's organization. */
const roleFor: Record<RepositoryAction, string> = {
  pull: "registry.reader",
  push: "registry.developer",
  delete: "registry.developer",
};

/**
 * Who is calling: an API key over HTTP Basic (any username, the key as the password) or Bearer, a
 * registry token as Bearer, or nobody. Credentials that are present but wrong are refused
 * (UNAUTHORIZED), never treated as anonymous.
 */
export async function identifyCaller(
  options: RegistryAccessOptions,
  authorization: string | undefined,
): Promise<RegistryCaller> {
  if (!authorization) return { kind: "anonymous" };
  let credential: ReturnType<typeof readAuthorization>;
  try {
    credential = readAuthorization(authorization);
  } catch (error) {
    if (error instanceof AuthorizationHeaderError) throw new OciError("UNAUTHORIZED", error.message);
    throw error;
  }
  const key = credential.secret;
  if (credential.scheme === "bearer" && !key.startsWith("dk_")) {
    const claims = options.tokens.verify(key);
    if (!claims) throw new OciError("UNAUTHORIZED", "the registry token is invalid or expired: request a new one");
    if (!claims.keyId || !claims.orgId || !claims.orgName)
      return { kind: "anonymous", tokenScopes: scopesOf(claims.access) };
    return {
      kind: "key",
      orgId: claims.orgId,
      orgName: claims.orgName,
      keyId: claims.keyId,
      roles: new Set(),
      tokenScopes: scopesOf(claims.access),
    };
  }
  try {
    const principal = await authenticate(options.db, `Bearer ${key}`, options.credentials, options.box);
    return { kind: "key", ...principal };
  } catch (error) {
    if (error instanceof ConnectError) throw new OciError("UNAUTHORIZED", error.rawMessage);
    throw error;
  }
}

function scopesOf(access: Readonly<Record<string, readonly string[]>>): ReadonlyMap<string, ReadonlySet<string>> {
  return new Map(Object.entries(access).map(([name, actions]) => [name, new Set(actions)]));
}

/** What the access decision needs to know of the repository a request names. */
export interface RepositoryFacts {
  readonly orgId: string | undefined;
  /** `<org>/<repo>`. */
  readonly fullName: string;
  readonly exists: boolean;
  readonly public: boolean;
}

/**
 * Whether `caller` may do `action` on the repository. A token grants exactly its scopes (they were
 * checked against the key's roles when it was issued); a key needs the action's role in the
 * repository's own organization; anyone may pull a public repository.
 */
export function mayDo(caller: RegistryCaller, repository: RepositoryFacts, action: RepositoryAction): boolean {
  if (action === "pull" && repository.exists && repository.public) return true;
  if (caller.tokenScopes) return caller.tokenScopes.get(repository.fullName)?.has(action) ?? false;
  if (caller.kind !== "key" || repository.orgId !== caller.orgId) return false;
  return holdsRole(caller.roles, roleFor[action]);
}

/**
 * Refuses `action` when the caller may not do it, with the answer that reveals nothing and lets a
 * client recover: without a credential, or with a token that lacks the scope, the caller is asked to
 * authenticate (401, whose challenge names the scope to ask a token for), even for a repository that
 * does not exist; another organization's repository is NAME_UNKNOWN, as if it did not exist; a key
 * of the organization without the role is DENIED.
 */
export function assertMayDo(caller: RegistryCaller, repository: RepositoryFacts, action: RepositoryAction): void {
  if (mayDo(caller, repository, action)) return;
  if (caller.kind === "anonymous" || caller.tokenScopes) {
    throw new OciError("UNAUTHORIZED", `authentication required to ${action} ${repository.fullName}`, [
      { Type: "repository", Name: repository.fullName, Action: action },
    ]);
  }
  if (caller.orgId !== repository.orgId) {
    throw new OciError("NAME_UNKNOWN", `repository ${repository.fullName} is not known to this registry`);
  }
  throw new OciError("DENIED", `this API key may not ${action} ${repository.fullName}: its roles do not allow it`);
}
