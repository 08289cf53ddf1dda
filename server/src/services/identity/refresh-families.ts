import { randomUUID } from "node:crypto";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { prepareSql } from "../../db/prepared-statements.js";
import type { SecretBox } from "../secrets/secret-box.js";
import { GrantError } from "./grant-error.js";
import { identityRefreshFamilies, identityRefreshTokens } from "./identity-schema.js";
import { hashOpaqueToken, newOpaqueToken } from "./opaque-token.js";
import type { PoolRef } from "./pool-store.js";

/** A refresh token stays usable this long after it was issued (each rotation issues a fresh one). */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
/** How long a rotated token may be presented again and get the same successor back. */
export const REFRESH_REUSE_GRACE_MS = 10_000;

export type RevokeReason = "logout" | "reuse" | "code_replay" | "user_revoked" | "password_changed" | "password_reset" | "user_deleted" | "user_banned" | "tenant_removed";

/** What a session (refresh-token family) was started for. */
export interface SessionRecord {
  readonly id: string;
  readonly userId: string;
  /** "" for the password grant. */
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
}

/**
 * Sessions and their rotating refresh tokens. A refresh token is opaque and stored as its SHA-256;
 * every use rotates it. Presenting a token that was already rotated burns the whole family, the
 * standard defence against a stolen token, except for the immediate predecessor of the current
 * token within {@link REFRESH_REUSE_GRACE_MS}: a client that sent the same refresh twice (a retry,
 * two tabs) gets the same successor again. The successor is kept sealed on its predecessor's row
 * for that purpose, and only until it is itself rotated.
 *
 * A rotation of a live token is one statement (one round trip): a conditional UPDATE of the
 * token that only an unrotated, unexpired token of a live session passes, with the successor's
 * insert and the bookkeeping in the same statement. Of concurrent refreshes of one token exactly one
 * passes (the others wait on its row lock, then find it rotated); everything else (a rotated,
 * expired, revoked or unknown token) takes the careful path, which locks the family's row in one
 * transaction and decides between the grace answer and burning the family. There is never a second
 * child.
 */
export interface RefreshFamilies {
  start(pool: PoolRef, input: SessionStart): Promise<IssuedRefresh>;
  /** Throws {@link GrantError} `invalid_grant` for an unknown, expired, revoked or reused token. */
  rotate(pool: PoolRef, presented: string): Promise<IssuedRefresh>;
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

type Outcome = { readonly kind: "issued"; readonly issued: IssuedRefresh } | { readonly kind: "refused"; readonly reason: string };

const sessionColumns = {
  id: identityRefreshFamilies.id,
  userId: identityRefreshFamilies.userId,
  clientId: identityRefreshFamilies.clientId,
  tenant: identityRefreshFamilies.tenant,
  scope: identityRefreshFamilies.scope,
  authTime: identityRefreshFamilies.authTime,
  revokedAt: identityRefreshFamilies.revokedAt,
};

export function createRefreshFamilies(db: Database, box: SecretBox, options: RefreshFamilyOptions = {}): RefreshFamilies {
  const now = options.now ?? Date.now;
  const graceMs = options.graceMs ?? REFRESH_REUSE_GRACE_MS;
  const ttlMs = options.ttlMs ?? REFRESH_TOKEN_TTL_MS;
  // Bound to the successor's id, which the single-statement rotation knows before it runs.
  const successorContext = (successorId: string) => `identity-refresh-successor:${successorId}`;
  const inPool = (pool: PoolRef) => and(eq(identityRefreshTokens.orgId, pool.orgId), eq(identityRefreshTokens.poolId, pool.poolId));
  const family = (pool: PoolRef, id: string) =>
    and(eq(identityRefreshFamilies.orgId, pool.orgId), eq(identityRefreshFamilies.poolId, pool.poolId), eq(identityRefreshFamilies.id, id));

  const value = (name: string) => sql.placeholder(name);
  const rotateLiveStatement = prepareSql<{ id: string; userId: string; clientId: string; tenant: string; scope: string; authTime: number }>(
    db,
    "identity_refresh_rotate_live",
    sql`
      with rotated as (
        update identity_refresh_tokens t
           set rotated_at = ${value("at")}, successor_id = ${value("childId")}::uuid, sealed_successor = ${value("sealedSuccessor")}
          from identity_refresh_families f
         where t.org_id = ${value("orgId")}::uuid and t.pool_id = ${value("poolId")}::uuid and t.token_hash = ${value("tokenHash")}
           and t.rotated_at = 0 and t.expires_at > ${value("at")}
           and f.id = t.family_id and f.revoked_at = 0
        returning t.id, t.family_id, f.user_id, f.client_id, f.tenant, f.scope, f.auth_time
      ), successor as (
        insert into identity_refresh_tokens (id, org_id, pool_id, family_id, token_hash, expires_at)
        select ${value("childId")}::uuid, ${value("orgId")}::uuid, ${value("poolId")}::uuid, family_id, ${value("childHash")}::text, ${value("childExpiresAt")}::bigint from rotated
      ), predecessor as (
        update identity_refresh_tokens set sealed_successor = null
         where successor_id in (select id from rotated) and sealed_successor is not null
      ), session as (
        update identity_refresh_families set last_used_at = ${value("at")}::bigint where id in (select family_id from rotated)
      )
      select family_id as "id", user_id as "userId", client_id as "clientId", tenant, scope, auth_time::float8 as "authTime" from rotated`,
  );

  async function rotateIn(tx: Database, pool: PoolRef, presented: string): Promise<Outcome> {
    const at = now();
    const [found] = await tx
      .select({ id: identityRefreshTokens.id, familyId: identityRefreshTokens.familyId })
      .from(identityRefreshTokens)
      .where(and(inPool(pool), eq(identityRefreshTokens.tokenHash, hashOpaqueToken(presented))));
    if (!found) return { kind: "refused", reason: "the refresh token is not known" };
    // The family row is the lock of its whole chain, taken before any token row: every path takes
    // locks in that order, so refreshes of a token and of its successor cannot deadlock.
    const [session] = await tx.select(sessionColumns).from(identityRefreshFamilies).where(family(pool, found.familyId)).for("update");
    if (!session || session.revokedAt !== 0) return { kind: "refused", reason: "the session has ended" };
    // Read after the family lock: under READ COMMITTED this sees the rotation that held it last.
    const [token] = await tx.select().from(identityRefreshTokens).where(eq(identityRefreshTokens.id, found.id));
    if (!token) return { kind: "refused", reason: "the refresh token is not known" };

    if (token.rotatedAt === 0) {
      if (token.expiresAt <= at) return { kind: "refused", reason: "the refresh token has expired" };
      const child = newOpaqueToken();
      const childId = randomUUID();
      await tx.insert(identityRefreshTokens).values({ ...pool, id: childId, familyId: token.familyId, tokenHash: child.hash, expiresAt: at + ttlMs });
      await tx
        .update(identityRefreshTokens)
        .set({ rotatedAt: at, successorId: childId, sealedSuccessor: box.seal(Buffer.from(child.token, "utf8"), successorContext(childId)) })
        .where(eq(identityRefreshTokens.id, token.id));
      // The predecessor can no longer be replayed (its successor is now rotated): drop its sealed copy.
      await tx
        .update(identityRefreshTokens)
        .set({ sealedSuccessor: null })
        .where(and(eq(identityRefreshTokens.successorId, token.id), isNotNull(identityRefreshTokens.sealedSuccessor)));
      await tx.update(identityRefreshFamilies).set({ lastUsedAt: at }).where(eq(identityRefreshFamilies.id, token.familyId));
      return { kind: "issued", issued: { session, refreshToken: child.token, replayed: false } };
    }

    const [successor] = token.successorId
      ? await tx.select({ rotatedAt: identityRefreshTokens.rotatedAt }).from(identityRefreshTokens).where(eq(identityRefreshTokens.id, token.successorId))
      : [];
    if (at - token.rotatedAt <= graceMs && successor?.rotatedAt === 0 && token.sealedSuccessor) {
      const again = Buffer.from(box.open(token.sealedSuccessor, successorContext(token.successorId!))).toString("utf8");
      return { kind: "issued", issued: { session, refreshToken: again, replayed: true } };
    }
    await tx.update(identityRefreshFamilies).set({ revokedAt: at, revokedReason: "reuse" }).where(eq(identityRefreshFamilies.id, token.familyId));
    return { kind: "refused", reason: "the refresh token was already used; the session has been revoked" };
  }

  /** The common case in one statement; undefined when the token is not a live, unrotated one. */
  async function rotateLive(pool: PoolRef, presented: string): Promise<IssuedRefresh | undefined> {
    const at = now();
    const child = newOpaqueToken();
    const childId = randomUUID();
    const [row] = await rotateLiveStatement.execute({
      ...pool,
      at,
      tokenHash: hashOpaqueToken(presented),
      childId,
      childHash: child.hash,
      childExpiresAt: at + ttlMs,
      sealedSuccessor: box.seal(Buffer.from(child.token, "utf8"), successorContext(childId)),
    });
    if (!row) return undefined;
    return { session: { ...row, authTime: Number(row.authTime), revokedAt: 0 }, refreshToken: child.token, replayed: false };
  }

  return {
    start: (pool, input) => startFamily(db, pool, input, now(), ttlMs),

    async rotate(pool, presented) {
      const live = await rotateLive(pool, presented);
      if (live) return live;
      // Decided inside, thrown outside: a refusal that burns the family must commit first.
      const outcome = await db.transaction((tx) => rotateIn(tx, pool, presented));
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
      return token ? revoke(db, pool, { sessionId: token.familyId }, "logout", now()).then((count) => count > 0) : false;
    },

    revokeFamily: (pool, sessionId, reason) => revoke(db, pool, { sessionId }, reason, now()).then((count) => count > 0),
    revokeUser: (pool, userId, reason) => revoke(db, pool, { userId }, reason, now()),
  };
}

/** Starts a session with its first refresh token; pass a transaction to start it alongside other writes. */
export async function startFamily(db: Database, pool: PoolRef, input: SessionStart, at: number, ttlMs = REFRESH_TOKEN_TTL_MS): Promise<IssuedRefresh> {
  const first = newOpaqueToken();
  const [session] = await db
    .insert(identityRefreshFamilies)
    .values({ ...pool, userId: input.userId, clientId: input.clientId ?? "", tenant: input.tenant ?? "", scope: input.scope ?? "", authTime: input.authTimeMs })
    .returning(sessionColumns);
  await db.insert(identityRefreshTokens).values({ ...pool, familyId: session!.id, tokenHash: first.hash, expiresAt: at + ttlMs });
  return { session: session!, refreshToken: first.token, replayed: false };
}

/** Which live sessions to end: one, all of a user's, or those pinned to a tenant (of one user, or of all). */
export type RevokeTarget = { readonly sessionId: string } | { readonly userId: string } | { readonly tenant: string; readonly userId?: string };

/** Ends live sessions; pass a transaction to do it alongside other writes. */
export async function revoke(db: Database, pool: PoolRef, which: RevokeTarget, reason: RevokeReason, at: number): Promise<number> {
  const target =
    "sessionId" in which
      ? eq(identityRefreshFamilies.id, which.sessionId)
      : "tenant" in which
        ? and(eq(identityRefreshFamilies.tenant, which.tenant), which.userId === undefined ? undefined : eq(identityRefreshFamilies.userId, which.userId))
        : eq(identityRefreshFamilies.userId, which.userId);
  const rows = await db
    .update(identityRefreshFamilies)
    .set({ revokedAt: at, revokedReason: reason })
    .where(and(eq(identityRefreshFamilies.orgId, pool.orgId), eq(identityRefreshFamilies.poolId, pool.poolId), target, eq(identityRefreshFamilies.revokedAt, 0)))
    .returning({ id: identityRefreshFamilies.id });
  return rows.length;
}
