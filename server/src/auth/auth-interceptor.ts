import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ServiceAccess, ServiceBinding } from "@platform/codegen/runtime";
import { and, eq, isNull, lte, sql } from "drizzle-orm";
import type { Database } from "../db/database.js";
import { apiKeys, organizations, permissions } from "./auth-schema.js";
import { perDatabase } from "../db/prepared-statements.js";
import { apiKeySecretDigest, isApiKeySecretShape } from "./api-key-secret.js";
import type { CredentialCache, VerifiedCredential } from "./credential-cache.js";
import { principalKey, type Principal } from "./principal.js";
import { sealS3Secret } from "./s3-secret.js";
import type { SecretBox } from "../crypto/secret-box.js";
import { requiredRole, type RequiredRole } from "./roles.js";

export interface AuthInterceptorOptions {
  readonly db: Database;
  /**
   * The services served, with their access rules (public methods, organization header). A
   * function is read when a call arrives, so a router can hand over its bindings before the
   * services are registered.
   */
  readonly bindings: readonly ServiceBinding[] | (() => readonly ServiceBinding[]);
  /**
   * Verified keys remembered across calls, kept in step with every process by
   * `followCredentialChanges`. Without it every call reads its key from the database (the admin
   * commands' short-lived in-process server).
   */
  readonly credentials?: CredentialCache;
  /** Seals the S3 secret of a key issued before the S3 listener existed, on its first verified use (s3-secret.ts). */
  readonly box?: SecretBox;
}

/** `last_used_at` is written at most this often per key: a busy key does not write on every call. */
export const lastUsedResolutionMs = 60_000;

const organizationHeader = "x-organization-name";

/**
 * Authenticates and authorizes every call, on every protocol (the router runs the same
 * interceptors for Connect, gRPC, gRPC-web and the HTTP routes):
 *
 * 1. Methods the contract marks public pass without credentials.
 * 2. `Authorization: Bearer <dk_ secret>` (scheme case-insensitive) must name an active, unexpired
 *    key; else UNAUTHENTICATED. The secret is never echoed in a message.
 * 3. On services whose contract requires `x-organization-name`, the header must be present and
 *    name the key's organization; else PERMISSION_DENIED. A missing header is refused rather than
 *    defaulted, because the contract makes it part of every call there and a client that omits
 *    it is misconfigured. Elsewhere the header is ignored: the key alone says the organization.
 * 4. The key's organization-wide roles must include one that `requiredRole` accepts; else
 *    PERMISSION_DENIED naming the roles that would do.
 *
 * With a credential cache, a key the database accepted is not read again until a revocation,
 * rotation or grant change of it is announced (on PostgreSQL, to every process through
 * LISTEN/NOTIFY) or its entry ages out; its expiry is checked on every call. The process making the
 * change drops the entry before answering, so its own next call already sees the change.
 */
export function createAuthInterceptor(options: AuthInterceptorOptions): Interceptor {
  const readBindings =
    typeof options.bindings === "function" ? options.bindings : () => options.bindings as readonly ServiceBinding[];
  const accessByService = new Map<string, ServiceAccess>();
  const requiredByMethod = new Map<DescMethod, RequiredRole>();

  function accessOf(service: DescService): ServiceAccess | undefined {
    if (!accessByService.has(service.typeName)) {
      for (const binding of readBindings()) accessByService.set(binding.service.typeName, binding.access);
    }
    return accessByService.get(service.typeName);
  }

  function requiredFor(service: DescService, method: DescMethod): RequiredRole {
    let required = requiredByMethod.get(method);
    if (!required) {
      required = requiredRole(service, method);
      requiredByMethod.set(method, required);
    }
    return required;
  }

  return (next) => async (request) => {
    const access = accessOf(request.service);
    // A call reaching a service the router does not list is a wiring bug: refuse it.
    if (!access) throw new ConnectError(`no access rule for ${request.service.typeName}`, Code.Internal);
    if (access.publicMethods.includes(request.method.localName)) return next(request);

    const principal = await authenticate(
      options.db,
      request.header.get("authorization"),
      options.credentials,
      options.box,
    );
    if (access.organizationHeader)
      checkOrganizationHeader(request.header.get(organizationHeader), principal, request.service.typeName);
    const required = requiredFor(request.service, request.method);
    if (!required.anyOf.some((role) => principal.roles.has(role))) {
      throw new ConnectError(
        `${request.service.typeName}/${request.method.name} needs one of the roles ${required.anyOf.join(", ")}; this API key has ${principal.roles.size === 0 ? "no roles" : [...principal.roles].join(", ")}`,
        Code.PermissionDenied,
      );
    }
    request.contextValues.set(principalKey, principal);
    return next(request);
  };
}

/** RFC 6750: a 401 names the scheme the client should use. */
const challenge = { "www-authenticate": 'Bearer realm="platform"' };

function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated, challenge);
}

/**
 * The key, its organization and its organization-wide roles in one round trip, as a prepared
 * statement: it runs on every call that misses the credential cache.
 */
/** The organization-wide roles of the API key of the row being read (not those on one resource). */
export const apiKeyOrgWideRoles = sql<string[]>`coalesce((select array_agg(${permissions.role}) from ${permissions}
  where ${permissions.orgId} = ${apiKeys.orgId} and ${permissions.principal} = ${apiKeys.id}::text
  and ${permissions.resource} = ''), '{}')`;

const credentialBySecretHash = perDatabase((db) =>
  db
    .select({
      keyId: apiKeys.id,
      orgId: apiKeys.orgId,
      state: apiKeys.state,
      secretPrefix: apiKeys.secretPrefix,
      expiresAt: apiKeys.expiresAt,
      lastUsedAt: apiKeys.lastUsedAt,
      hasS3Secret: sql<boolean>`${apiKeys.s3SecretSealed} is not null`,
      orgName: organizations.name,
      roles: apiKeyOrgWideRoles,
    })
    .from(apiKeys)
    .innerJoin(organizations, eq(organizations.id, apiKeys.orgId))
    .where(eq(apiKeys.secretHash, sql.placeholder("secretHash")))
    .prepare("auth_credential_by_secret_hash"),
);

/**
 * The principal behind an `Authorization: Bearer <API key>` header, or UNAUTHENTICATED. Exported
 * for planes that are not Connect services (git, registry) and for benchmarks.
 *
 * With `credentials`, a key the database accepted is remembered and later calls with it make no
 * round trip until a change notice, a reconnect of the listener or the cache's TTL drops it
 * (credential-changes.ts). Refusals are never remembered: an unknown, revoked or expired key is
 * looked up again each time, so no caller can fill the cache with made-up secrets.
 */
export async function authenticate(
  db: Database,
  authorization: string | null,
  credentials?: CredentialCache,
  box?: SecretBox,
): Promise<Principal> {
  if (!authorization) throw unauthenticated("missing credentials: send the header Authorization: Bearer <API key>");
  const match = /^(\S+)\s+(\S+)\s*$/.exec(authorization.trim());
  if (!match) throw unauthenticated("malformed Authorization header: expected Bearer <API key>");
  const [, scheme, token] = match;
  if (scheme!.toLowerCase() !== "bearer")
    throw unauthenticated(`unsupported authorization scheme "${scheme!.slice(0, 20)}": use Bearer <API key>`);
  if (!isApiKeySecretShape(token!))
    throw unauthenticated("malformed bearer token: expected an API key (dk_ followed by 43 characters)");

  const secretHash = apiKeySecretDigest(token!);
  let credential = credentials?.get(secretHash);
  if (!credential) {
    // Taken before the read: a change that lands while it runs keeps the answer out of the cache.
    const ticket = credentials?.ticket() ?? 0;
    const [row] = await credentialBySecretHash(db).execute({ secretHash: secretHash.toString("hex") });
    // A rotated key's old secret no longer hashes to any row: it is unknown from then on.
    if (!row) throw unauthenticated("unknown API key: it was never issued, or its secret was rotated");
    if (row.state === "revoked") throw unauthenticated(`API key ${row.secretPrefix}… (${row.keyId}) was revoked`);
    // Only here does the server see the secret of a key issued before S3 credentials existed.
    if (!row.hasS3Secret && box) {
      await db
        .update(apiKeys)
        .set({ s3SecretSealed: sealS3Secret(box, row.keyId, token!) })
        .where(and(eq(apiKeys.id, row.keyId), isNull(apiKeys.s3SecretSealed)));
    }
    credential = {
      principal: { orgId: row.orgId, orgName: row.orgName, keyId: row.keyId, roles: new Set(row.roles) },
      secretPrefix: row.secretPrefix,
      expiresAt: row.expiresAt,
      lastUsedAt: row.lastUsedAt,
    };
    if (!isExpired(credential, Date.now())) credentials?.put(secretHash, credential, ticket);
  }
  const now = Date.now();
  const { principal } = credential;
  if (isExpired(credential, now)) {
    throw unauthenticated(
      `API key ${credential.secretPrefix}… (${principal.keyId}) expired at ${new Date(credential.expiresAt).toISOString()}`,
    );
  }

  if (now - credential.lastUsedAt >= lastUsedResolutionMs) {
    // Moved forward first, so the calls of one key in this process write once per resolution
    // window; the condition does the same across processes.
    credential.lastUsedAt = now;
    await db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(and(eq(apiKeys.id, principal.keyId), lte(apiKeys.lastUsedAt, now - lastUsedResolutionMs)));
  }
  return principal;
}

function isExpired(credential: VerifiedCredential, now: number): boolean {
  return credential.expiresAt !== 0 && credential.expiresAt <= now;
}

function checkOrganizationHeader(value: string | null, principal: Principal, service: string): void {
  if (value === null || value.trim() === "") {
    throw new ConnectError(
      `${service} requires the header ${organizationHeader}: set it to your organization's name`,
      Code.PermissionDenied,
    );
  }
  if (value.trim() !== principal.orgName) {
    throw new ConnectError(
      `${organizationHeader} "${value.trim().slice(0, 63)}" is not the organization of this API key`,
      Code.PermissionDenied,
    );
  }
}
