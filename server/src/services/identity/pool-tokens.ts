import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { errors, type JWTPayload } from "jose";
import { GrantError } from "./grant-error.js";
import type { PoolKeys } from "./pool-keys.js";
import { poolRefOf, type PoolRecord, type PoolRef } from "./pool-store.js";
import { EMPTY_ROLE_CATALOG, parseRoleCatalog, resolvePermissions, type RoleCatalog } from "./role-catalog.js";

/** `expires_in` of every access token. */
export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const ID_TOKEN_TTL_SECONDS = 900;
/** RFC 9068's media type for JWT access tokens: an ID token can never pass for an access token. */
export const ACCESS_TOKEN_TYPE = "at+jwt";

/** A pool as the token code sees it: where it issues, for whom, and how roles resolve. */
export interface PoolIssuer {
  readonly pool: PoolRef;
  /** `{identity_url}/{org}/{pool}`. */
  readonly issuer: string;
  /** `pool:<name>`: the `aud` of access tokens. */
  readonly audience: string;
  readonly roleCatalog: RoleCatalog;
}

/** The user a token is about, with the tenants the user belongs to. */
export interface TokenSubject {
  readonly userId: string;
  readonly email: string;
  readonly emailVerified: boolean;
  readonly appRoles: readonly string[];
  readonly memberships: readonly { readonly slug: string; readonly roles: readonly string[] }[];
}

export interface TenantClaim {
  readonly roles: string[];
  readonly permissions: string[];
}

export interface AccessTokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
  readonly exp: number;
  readonly iat: number;
  readonly jti: string;
  /** The session (refresh-token family). */
  readonly sid: string;
  readonly email: string;
  readonly email_verified: boolean;
  readonly permissions: string[];
  readonly tenants: Record<string, TenantClaim>;
  /** Set when the session is pinned to one tenant. */
  readonly tenant?: string;
  /** The client the session was issued to (RFC 9068): the code flow's, or the one a password grant named. */
  readonly client_id?: string;
}

export function poolIssuer(identityUrl: string, organization: string, pool: PoolRecord): PoolIssuer {
  const roleCatalog =
    Object.keys(pool.roleCatalog).length === 0 ? EMPTY_ROLE_CATALOG : parseRoleCatalog(pool.roleCatalog);
  return {
    pool: poolRefOf(pool),
    issuer: `${identityUrl.replace(/\/+$/, "")}/${organization}/${pool.name}`,
    audience: `pool:${pool.name}`,
    roleCatalog,
  };
}

/**
 * The claims of an access token: the user's app roles resolved to `permissions`, and each tenant
 * with its roles and their permissions. A session pinned to a tenant carries only that tenant, and
 * a user who is not (or no longer) a member of it gets no token.
 */
export function accessTokenClaims(
  issuer: PoolIssuer,
  session: {
    readonly subject: TokenSubject;
    readonly sessionId: string;
    readonly tenant?: string;
    readonly clientId?: string;
  },
  nowMs: number,
): AccessTokenClaims {
  const { subject } = session;
  const memberships = session.tenant
    ? subject.memberships.filter((m) => m.slug === session.tenant)
    : subject.memberships;
  if (session.tenant && memberships.length === 0)
    throw new GrantError("access_denied", `the user is not a member of tenant "${session.tenant}"`);
  const tenants: Record<string, TenantClaim> = {};
  for (const membership of memberships) {
    tenants[membership.slug] = {
      roles: [...membership.roles],
      permissions: resolvePermissions(issuer.roleCatalog, membership.roles),
    };
  }
  const iat = Math.floor(nowMs / 1000);
  return {
    iss: issuer.issuer,
    sub: subject.userId,
    aud: issuer.audience,
    exp: iat + ACCESS_TOKEN_TTL_SECONDS,
    iat,
    jti: randomUUID(),
    sid: session.sessionId,
    email: subject.email,
    email_verified: subject.emailVerified,
    permissions: resolvePermissions(issuer.roleCatalog, subject.appRoles),
    tenants,
    ...(session.tenant ? { tenant: session.tenant } : {}),
    ...(session.clientId ? { client_id: session.clientId } : {}),
  };
}

export async function issueAccessToken(keys: PoolKeys, issuer: PoolIssuer, claims: AccessTokenClaims): Promise<string> {
  return keys.sign(issuer.pool, { ...claims } satisfies JWTPayload, ACCESS_TOKEN_TYPE);
}

/** An OpenID Connect ID token for the code flow with scope `openid`. */
export async function issueIdToken(
  keys: PoolKeys,
  issuer: PoolIssuer,
  input: {
    readonly subject: TokenSubject;
    readonly clientId: string;
    readonly nonce: string;
    readonly authTimeMs: number;
    readonly sessionId: string;
  },
  nowMs: number,
): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  const payload: JWTPayload = {
    iss: issuer.issuer,
    sub: input.subject.userId,
    aud: input.clientId,
    exp: iat + ID_TOKEN_TTL_SECONDS,
    iat,
    auth_time: Math.floor(input.authTimeMs / 1000),
    sid: input.sessionId,
    email: input.subject.email,
    email_verified: input.subject.emailVerified,
    ...(input.nonce ? { nonce: input.nonce } : {}),
  };
  return keys.sign(issuer.pool, payload, "JWT");
}

/**
 * Checks a bearer access token for GET /user: signed by a key of this pool (a token of another
 * pool, even of the same organization, fails here), with this pool's issuer and audience, of the
 * access-token type and not expired. Every failure is UNAUTHENTICATED.
 */
export async function verifyAccessToken(
  keys: PoolKeys,
  issuer: PoolIssuer,
  token: string,
  nowMs = Date.now(),
): Promise<AccessTokenClaims> {
  try {
    const { payload } = await keys.verify(issuer.pool, token, {
      issuer: issuer.issuer,
      audience: issuer.audience,
      typ: ACCESS_TOKEN_TYPE,
      requiredClaims: ["sub", "exp", "iat", "sid"],
      currentDate: new Date(nowMs),
    });
    return payload as unknown as AccessTokenClaims;
  } catch (error) {
    if (error instanceof errors.JWTExpired)
      throw new ConnectError("the access token has expired", Code.Unauthenticated);
    if (error instanceof ConnectError) throw error;
    if (error instanceof errors.JOSEError)
      throw new ConnectError(`the access token is not valid for this pool (${error.code})`, Code.Unauthenticated);
    throw error;
  }
}
