import { createHmac, randomUUID } from "node:crypto";
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { prepareSql } from "../../db/prepared-statements.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { GrantError } from "./grant-error.js";
import { identityRefreshFamilies, identityRefreshTokens } from "./identity-schema.js";
import { hashOpaqueToken, newOpaqueToken } from "./opaque-token.js";
import type { PoolRef } from "./pool-store.js";
import { userTenantsJson, type UserTenantRecord } from "./tenant-store.js";
import type { AppUserRecord } from "./user-store.js";

/** A refresh token stays usable this long after it was issued (each rotation issues a fresh one). */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** How long a rotated token may be presented again and get the same successor back. */
export const REFRESH_REUSE_GRACE_MS = 10_000;

export type RevokeReason =
  | "logout"
  | "reuse"
  | "code_replay"
  | "user_revoked"
  | "password_changed"
  | "password_reset"
  | "user_deleted"
  | "user_banned"
  | "tenant_removed";

/** What a session (refresh-token family) was started for. */
export interface SessionRecord {
  readonly id: string;
  readonly userId: string;
  /** The client the session was issued to; "" for a password grant that named none. */
  readonly clientId: string;
  /** The pinned tenant slug, "" for none. */
  readonly tenant: string;
  readonly scope: string;
  readonly authTime: number;
  readonly revokedAt: number;
}

export interface SessionStart {
  readonly userId: string;
  readonly clientId?: string;
  readonly tenant?: string;
  readonly scope?: string;
  readonly authTimeMs: number;
}

export interface IssuedRefresh {
  readonly session: SessionRecord;
  readonly refreshToken: string;
  /** True when a double submit within the grace window got the successor issued before. */
  readonly replayed: boolean;
  /** The session's user (undefined when deleted) and tenants, when the rotation read them too. */
  readonly owner?: { readonly user: AppUserRecord | undefined; readonly tenants: UserTenantRecord[] };
}

/** What a live rotation answers: the session, and with `readOwner` its user (ownerId null when there is no live user). */
interface RotatedRow extends Omit<SessionRecord, "revokedAt">, Partial<Omit<AppUserRecord, "id">> {
  readonly ownerId?: string | null;
  readonly tenants?: UserTenantRecord[];
}

/**
 * Sessions and their rotating refresh tokens. A refresh token is opaque and stored as its SHA-256;
 * every use rotates it. Presenting a token that was already rotated burns the whole family, the
 * standard defence against a stolen token, except for the immediate predecessor of the current
 * token within {@link REFRESH_REUSE_GRACE_MS}: a client that sent the same refresh twice (a retry,
 * two tabs) gets the same successor again. That is possible because a successor is not drawn at
 * random but derived: the HMAC-SHA256 of its predecessor under a key derived from the server's
 * secret. A first token is random (256 bits), so every token is unpredictable without that key, and
 * the database holds token hashes only: no stored value gives a usable token back.
 *
 * A rotation of a live token is one statement (one round trip): a conditional UPDATE of the
 * token that only an unrotated, unexpired token of a live session passes, with the successor's
 * insert and the bookkeeping in the same statement. Of concurrent refreshes of one token exactly one
 * passes (the others wait on its row lock, then find it rotated); everything else (a rotated,
 * expired, revoked or unknown token, or another client's) takes the careful path, which locks the
 * family's row in one transaction and decides between the grace answer and burning the family.
 * There is never a second child.
 */
export interface RefreshFamilies {
  start(pool: PoolRef, input: SessionStart): Promise<IssuedRefresh>;
  /**
   * Throws {@link GrantError} `invalid_grant` for an unknown, expired, revoked or reused token.
   * `readOwner` (for pools whose users live in this database) has the rotation of a live token
   * read the session's user and tenants in the same statement, as `owner`. `clientId`, when the
   * request names one, must be the client the session was issued to (RFC 6749 section 6): another
   * client's token is refused as `invalid_grant` and left as it was.
   */
  rotate(
    pool: PoolRef,
    presented: string,
    options?: { readonly readOwner?: boolean; readonly clientId?: string },
  ): Promise<IssuedRefresh>;
  get(pool: PoolRef, sessionId: string): Promise<SessionRecord | undefined>;
  /** Logout: revokes the family the token belongs to. Answers whether a live session ended. */
  revokeByToken(pool: PoolRef, presented: string): Promise<boolean>;
  revokeFamily(pool: PoolRef, sessionId: string, reason: RevokeReason): Promise<boolean>;
  /** Signs a user out everywhere; answers how many sessions ended. */
  revokeUser(pool: PoolRef, userId: string, reason: RevokeReason): Promise<number>;
}

export interface RefreshFamilyOptions {
  readonly now?: () => number;
  readonly graceMs?: number;
  readonly ttlMs?: number;
}

const CLIENT_MISMATCH = "client_id is not the one the refresh token was issued to";

type Outcome =
  { readonly kind: "issued"; readonly issued: IssuedRefresh } | { readonly kind: "refused"; readonly reason: string };

const sessionColumns = {
  id: identityRefreshFamilies.id,
  userId: identityRefreshFamilies.userId,
  clientId: identityRefreshFamilies.clientId,
  tenant: identityRefreshFamilies.tenant,
  scope: identityRefreshFamilies.scope,
  authTime: identityRefreshFamilies.authTime,
  revokedAt: identityRefreshFamilies.revokedAt,
};

export function createRefreshFamilies(
  db: Database,
  box: SecretBox,
  options: RefreshFamilyOptions = {},
): RefreshFamilies {
  const now = options.now ?? Date.now;
  const graceMs = options.graceMs ?? REFRESH_REUSE_GRACE_MS;
  const ttlMs = options.ttlMs ?? REFRESH_TOKEN_TTL_MS;
  const successorKey = box.deriveKey("identity refresh token successors");
  const successorOf = (token: string) => createHmac("sha256", successorKey).update(token, "utf8").digest("base64url");
  const inPool = (pool: PoolRef) =>
    and(eq(identityRefreshTokens.orgId, pool.orgId), eq(identityRefreshTokens.poolId, pool.poolId));
  const family = (pool: PoolRef, id: string) =>
    and(
      eq(identityRefreshFamilies.orgId, pool.orgId),
      eq(identityRefreshFamilies.poolId, pool.poolId),
      eq(identityRefreshFamilies.id, id),
    );

  const value = (name: string) => sql.placeholder(name);
  const rotateLiveSql = (answer: SQL) => sql`
      with rotated as (
        update identity_refresh_tokens t
           set rotated_at = ${value("at")}, successor_id = ${value("childId")}::uuid
          from identity_refresh_families f
         where t.org_id = ${value("orgId")}::uuid and t.pool_id = ${value("poolId")}::uuid and t.token_hash = ${value("tokenHash")}
           and t.rotated_at = 0 and t.expires_at > ${value("at")}
           and f.id = t.family_id and f.revoked_at = 0 and f.client_id = coalesce(${value("clientId")}::text, f.client_id)
        returning t.id, t.family_id, f.user_id, f.client_id, f.tenant, f.scope, f.auth_time
      ), successor as (
        insert into identity_refresh_tokens (id, org_id, pool_id, family_id, token_hash, expires_at)
        select ${value("childId")}::uuid, ${value("orgId")}::uuid, ${value("poolId")}::uuid, family_id, ${value("childHash")}::text, ${value("childExpiresAt")}::bigint from rotated
      ), session as (
        update identity_refresh_families set last_used_at = ${value("at")}::bigint where id in (select family_id from rotated)
      )
      ${answer}`;
  const sessionAnswer = sql`select r.family_id as "id", r.user_id as "userId", r.client_id as "clientId", r.tenant, r.scope, r.auth_time::float8 as "authTime"`;
  const rotateLiveStatement = prepareSql<RotatedRow>(
    db,
    "identity_refresh_rotate_live",
    rotateLiveSql(sql`${sessionAnswer} from rotated r`),
  );
  // The same rotation answering the session's user and tenants too: the one statement a refresh
  // needs when the pool's users live in this database. No user row means a deleted user.
  const rotateLiveReadingOwnerStatement = prepareSql<RotatedRow>(
    db,
    "identity_refresh_rotate_live_owner",
    rotateLiveSql(sql`${sessionAnswer},
        u.id as "ownerId", u.email, u.email_verified as "emailVerified", u.app_roles as "appRoles", u.banned,
        u.created_at::float8 as "createdAt", u.updated_at::float8 as "updatedAt", u.deleted_at::float8 as "deletedAt",
        ${userTenantsJson({ orgId: sql`${value("orgId")}::uuid`, poolId: sql`${value("poolId")}::uuid`, userId: sql.raw("r.user_id") })} as "tenants"
      from rotated r
      left join identity_users u on u.org_id = ${value("orgId")}::uuid and u.pool_id = ${value("poolId")}::uuid and u.id = r.user_id and u.deleted_at = 0`),
  );

  async function rotateIn(
    tx: Database,
    pool: PoolRef,
    presented: string,
    clientId: string | undefined,
  ): Promise<Outcome> {
    const at = now();
    const [found] = await tx
      .select({ id: identityRefreshTokens.id, familyId: identityRefreshTokens.familyId })
      .from(identityRefreshTokens)
      .where(and(inPool(pool), eq(identityRefreshTokens.tokenHash, hashOpaqueToken(presented))));
    if (!found) return { kind: "refused", reason: "the refresh token is not known" };
    // The family row is the lock of its whole chain, taken before any token row: every path takes
    // locks in that order, so refreshes of a token and of its successor cannot deadlock.
    const [session] = await tx
      .select(sessionColumns)
      .from(identityRefreshFamilies)
      .where(family(pool, found.familyId))
      .for("update");
    if (!session || session.revokedAt !== 0) return { kind: "refused", reason: "the session has ended" };
    // Another client's refresh changes nothing: it neither rotates nor burns the family.
    if (clientId !== undefined && session.clientId !== clientId) return { kind: "refused", reason: CLIENT_MISMATCH };
    // Read after the family lock: under READ COMMITTED this sees the rotation that held it last.
    const [token] = await tx.select().from(identityRefreshTokens).where(eq(identityRefreshTokens.id, found.id));
    if (!token) return { kind: "refused", reason: "the refresh token is not known" };
    // A token the one-statement rotation passed over while unrotated, in a live session and for
    // its client, is one that has expired: rotation and revocation are never undone, and a token's
    // row commits before anyone holds the token.
    if (token.rotatedAt === 0) return { kind: "refused", reason: "the refresh token has expired" };

    const [successor] = token.successorId
      ? await tx
          .select({ rotatedAt: identityRefreshTokens.rotatedAt })
          .from(identityRefreshTokens)
          .where(eq(identityRefreshTokens.id, token.successorId))
      : [];
    if (at - token.rotatedAt <= graceMs && successor?.rotatedAt === 0) {
      return { kind: "issued", issued: { session, refreshToken: successorOf(presented), replayed: true } };
    }
    await tx
      .update(identityRefreshFamilies)
      .set({ revokedAt: at, revokedReason: "reuse" })
      .where(eq(identityRefreshFamilies.id, token.familyId));
    return { kind: "refused", reason: "the refresh token was already used; the session has been revoked" };
  }

  /** The common case in one statement; undefined when the token is not a live, unrotated one. */
  async function rotateLive(
    pool: PoolRef,
    presented: string,
    readOwner: boolean,
    requestedClient: string | undefined,
  ): Promise<IssuedRefresh | undefined> {
    const at = now();
    const child = successorOf(presented);
    const [row] = await (readOwner ? rotateLiveReadingOwnerStatement : rotateLiveStatement).execute({
      ...pool,
      at,
      clientId: requestedClient ?? null,
      tokenHash: hashOpaqueToken(presented),
      childId: randomUUID(),
      childHash: hashOpaqueToken(child),
      childExpiresAt: at + ttlMs,
    });
    if (!row) return undefined;
    const { id, userId, clientId, tenant, scope, authTime, ownerId, tenants, ...user } = row;
    const issued = {
      session: { id, userId, clientId, tenant, scope, authTime: Number(authTime), revokedAt: 0 },
      refreshToken: child,
      replayed: false,
    };
    if (!readOwner) return issued;
    return {
      ...issued,
      owner: { user: ownerId ? ({ id: ownerId, ...user } as AppUserRecord) : undefined, tenants: tenants ?? [] },
    };
  }

  return {
    start: (pool, input) => startFamily(db, pool, input, now(), ttlMs),

    async rotate(pool, presented, options) {
      const clientId = options?.clientId;
      const live = await rotateLive(pool, presented, options?.readOwner ?? false, clientId);
      if (live) return live;
      // Decided inside, thrown outside: a refusal that burns the family must commit first.
      const outcome = await db.transaction((tx) => rotateIn(tx, pool, presented, clientId));
      if (outcome.kind === "refused") throw new GrantError("invalid_grant", outcome.reason);
      return outcome.issued;
    },

    async get(pool, sessionId) {
      const [row] = await db.select(sessionColumns).from(identityRefreshFamilies).where(family(pool, sessionId));
      return row;
    },

    async revokeByToken(pool, presented) {
      const [token] = await db
        .select({ familyId: identityRefreshTokens.familyId })
        .from(identityRefreshTokens)
        .where(and(inPool(pool), eq(identityRefreshTokens.tokenHash, hashOpaqueToken(presented))));
      return token
        ? revoke(db, pool, { sessionId: token.familyId }, "logout", now()).then((count) => count > 0)
        : false;
    },

    revokeFamily: (pool, sessionId, reason) =>
      revoke(db, pool, { sessionId }, reason, now()).then((count) => count > 0),
    revokeUser: (pool, userId, reason) => revoke(db, pool, { userId }, reason, now()),
  };
}

/** Starts a session with its first refresh token; pass a transaction to start it alongside other writes. */
export async function startFamily(
  db: Database,
  pool: PoolRef,
  input: SessionStart,
  at: number,
  ttlMs = REFRESH_TOKEN_TTL_MS,
): Promise<IssuedRefresh> {
  const first = newOpaqueToken();
  const [session] = await db
    .insert(identityRefreshFamilies)
    .values({
      ...pool,
      userId: input.userId,
      clientId: input.clientId ?? "",
      tenant: input.tenant ?? "",
      scope: input.scope ?? "",
      authTime: input.authTimeMs,
    })
    .returning(sessionColumns);
  await db
    .insert(identityRefreshTokens)
    .values({ ...pool, familyId: session!.id, tokenHash: first.hash, expiresAt: at + ttlMs });
  return { session: session!, refreshToken: first.token, replayed: false };
}

/** Which live sessions to end: one, all of a user's, or those pinned to a tenant (of one user, or of all). */
export type RevokeTarget =
  { readonly sessionId: string } | { readonly userId: string } | { readonly tenant: string; readonly userId?: string };

/** Ends live sessions; pass a transaction to do it alongside other writes. */
export async function revoke(
  db: Database,
  pool: PoolRef,
  which: RevokeTarget,
  reason: RevokeReason,
  at: number,
): Promise<number> {
  const target =
    "sessionId" in which
      ? eq(identityRefreshFamilies.id, which.sessionId)
      : "tenant" in which
        ? and(
            eq(identityRefreshFamilies.tenant, which.tenant),
            which.userId === undefined ? undefined : eq(identityRefreshFamilies.userId, which.userId),
          )
        : eq(identityRefreshFamilies.userId, which.userId);
  const rows = await db
    .update(identityRefreshFamilies)
    .set({ revokedAt: at, revokedReason: reason })
    .where(
      and(
        eq(identityRefreshFamilies.orgId, pool.orgId),
        eq(identityRefreshFamilies.poolId, pool.poolId),
        target,
        eq(identityRefreshFamilies.revokedAt, 0),
      ),
    )
    .returning({ id: identityRefreshFamilies.id });
  return rows.length;
}
