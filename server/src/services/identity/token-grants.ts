import { GrantError } from "./grant-error.js";
import { needsRehash, hashPassword, verifyPassword } from "./password-hashing.js";
import { localSignIn, type IdentityServices, type PoolContext } from "./pool-context.js";
import {
  ACCESS_TOKEN_TTL_SECONDS,
  accessTokenClaims,
  issueAccessToken,
  issueIdToken,
  type TokenSubject,
} from "./pool-tokens.js";
import type { IssuedRefresh, SessionRecord } from "./refresh-families.js";
import type { AppUserRecord } from "./user-store.js";

/** The token endpoint's answer (RFC 6749 section 5.1). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: "bearer";
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly id_token?: string;
}

/**
 * The three grants of POST /token. Each refuses with a {@link GrantError}: `invalid_grant` for
 * bad credentials (the same answer for an unknown address and a wrong password), `access_denied`
 * for a user who may not sign in now (banned, e-mail not verified where required, not a member
 * of the asked tenant, e-mail sign-in switched off).
 */
export async function passwordGrant(
  services: IdentityServices,
  pool: PoolContext,
  input: {
    readonly email: string;
    readonly password: string;
    readonly tenant?: string;
    readonly clientId?: string;
    readonly scope?: string;
  },
): Promise<TokenResponse> {
  const local = await localSignIn(services, pool.ref);
  if (!local.passwordGrant) throw new GrantError("access_denied", "the password grant is disabled for this pool");
  if (!local.open) throw new GrantError("access_denied", "e-mail and password sign-in is disabled for this pool");
  const user = await pool.users.findByEmail(input.email);
  // Checked even without a user, against a dummy hash: the time taken does not reveal the account.
  const matches = await verifyPassword(user?.passwordHash, input.password);
  if (!user || !matches) throw new GrantError("invalid_grant", "invalid e-mail or password");
  assertMaySignIn(pool, user);
  const subject = await subjectOf(pool, user);
  if (input.tenant && !subject.memberships.some((membership) => membership.slug === input.tenant)) {
    throw new GrantError("access_denied", `the user is not a member of tenant "${input.tenant}"`);
  }
  if (user.passwordHash && needsRehash(user.passwordHash)) {
    await pool.users.setPassword(user.id, await hashPassword(input.password), { endSessions: false });
  }
  const authTimeMs = services.now();
  const scope = input.scope ?? "";
  const issued = await services.families.start(pool.ref, {
    userId: user.id,
    clientId: input.clientId ?? "",
    tenant: input.tenant ?? "",
    scope,
    authTimeMs,
  });
  const response = await respond(services, pool, subject, issued);
  if (!hasOpenidScope(scope)) return response;
  // No authorization request, so no nonce; with no client named, the audience is the pool's own.
  const idToken = await issueIdToken(
    services.keys,
    pool.issuer,
    { subject, clientId: input.clientId ?? pool.issuer.audience, nonce: "", authTimeMs, sessionId: issued.session.id },
    services.now(),
  );
  return { ...response, id_token: idToken };
}

/**
 * Rotates the refresh token and mints a fresh access token for the session's user as it is now.
 * A `clientId` the request names must be the one the session was issued to.
 */
export async function refreshGrant(
  services: IdentityServices,
  pool: PoolContext,
  input: { readonly refreshToken: string; readonly clientId?: string },
): Promise<TokenResponse> {
  const issued = await services.families.rotate(pool.ref, input.refreshToken, {
    readOwner: pool.usersInPlatformDatabase,
    ...(input.clientId === undefined ? {} : { clientId: input.clientId }),
  });
  const owner = issued.owner ?? (await pool.users.getWithTenants(issued.session.userId));
  const user = await liveSessionUser(services, pool, issued.session, owner?.user);
  return respond(services, pool, subjectFrom(user, owner?.tenants ?? []), issued);
}

/** Exchanges an authorization code; with scope `openid` the answer carries an ID token too. */
export async function authorizationCodeGrant(
  services: IdentityServices,
  pool: PoolContext,
  input: {
    readonly code: string;
    readonly clientId: string;
    readonly redirectUri: string;
    readonly codeVerifier: string;
  },
): Promise<TokenResponse> {
  const { grant, issued } = await services.codes.exchange(pool.ref, input);
  const user = await liveSessionUser(services, pool, issued.session, await pool.users.get(issued.session.userId));
  const subject = await subjectOf(pool, user);
  const response = await respond(services, pool, subject, issued);
  if (!hasOpenidScope(grant.scope)) return response;
  const idToken = await issueIdToken(
    services.keys,
    pool.issuer,
    {
      subject,
      clientId: grant.clientId,
      nonce: grant.nonce,
      authTimeMs: grant.authTimeMs,
      sessionId: issued.session.id,
    },
    services.now(),
  );
  return { ...response, id_token: idToken };
}

function hasOpenidScope(scope: string): boolean {
  return scope.split(" ").includes("openid");
}

/** The signed-in user's state decides: a banned or unverified user gets no tokens. */
export function assertMaySignIn(pool: PoolContext, user: AppUserRecord): void {
  if (user.banned) throw new GrantError("access_denied", "the user is banned");
  if (pool.settings.emailVerificationRequired && !user.emailVerified)
    throw new GrantError("access_denied", "the e-mail address is not verified");
}

/** The session's user (as read), if it may still have tokens; otherwise the session ends here. */
async function liveSessionUser(
  services: IdentityServices,
  pool: PoolContext,
  session: SessionRecord,
  user: AppUserRecord | undefined,
): Promise<AppUserRecord> {
  if (user && !user.banned) return user;
  await services.families.revokeFamily(pool.ref, session.id, user ? "user_banned" : "user_deleted");
  throw new GrantError("invalid_grant", "the session's user can no longer sign in");
}

export async function subjectOf(pool: PoolContext, user: AppUserRecord): Promise<TokenSubject> {
  return subjectFrom(user, await pool.tenants.userTenants(user.id));
}

function subjectFrom(
  user: AppUserRecord,
  tenants: readonly { readonly slug: string; readonly roles: readonly string[] }[],
): TokenSubject {
  return {
    userId: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    appRoles: user.appRoles,
    memberships: tenants.map((tenant) => ({ slug: tenant.slug, roles: tenant.roles })),
  };
}

async function respond(
  services: IdentityServices,
  pool: PoolContext,
  subject: TokenSubject,
  issued: IssuedRefresh,
): Promise<TokenResponse> {
  const { session } = issued;
  const claims = accessTokenClaims(
    pool.issuer,
    { subject, sessionId: session.id, tenant: session.tenant || undefined, clientId: session.clientId || undefined },
    services.now(),
  );
  return {
    access_token: await issueAccessToken(services.keys, pool.issuer, claims),
    token_type: "bearer",
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    refresh_token: issued.refreshToken,
  };
}
