import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { GrantError } from "./grant-error.js";
import { identityAuthorizationCodes } from "./identity-schema.js";
import { hashOpaqueToken, newOpaqueToken } from "./opaque-token.js";
import { pkceMatches } from "./pkce.js";
import type { PoolRef } from "./pool-store.js";
import { revoke, startFamily, type IssuedRefresh } from "./refresh-families.js";

export const AUTHORIZATION_CODE_TTL_MS = 60_000;

/** What a code stands for: the signed-in user and the authorization request it answers. */
export interface CodeGrant {
  readonly userId: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scope: string;
  readonly nonce: string;
  /** The pinned tenant slug, "" for none. */
  readonly tenant: string;
  readonly authTimeMs: number;
}

export interface CodeExchange {
  readonly code: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeVerifier: string;
}

/**
 * Authorization codes: opaque, stored as their hash, valid 60 seconds, bound to the client, the
 * redirect URI and the PKCE challenge of the request that made them. A code is good for one
 * attempt: the first presentation consumes it whatever its outcome (RFC 6749 section 4.1.2), and a
 * later one revokes the session the first one started (section 4.1.2's SHOULD, made a MUST here).
 */
export interface AuthorizationCodes {
  /** Answers the code to put into the redirect. Pass a transaction to issue it alongside other writes. */
  issue(pool: PoolRef, grant: CodeGrant, db?: Database): Promise<string>;
  /** Starts the session the code grants. Throws {@link GrantError} `invalid_grant` on any mismatch. */
  exchange(
    pool: PoolRef,
    exchange: CodeExchange,
  ): Promise<{ readonly grant: CodeGrant; readonly issued: IssuedRefresh }>;
}

type Outcome =
  | { readonly kind: "granted"; readonly grant: CodeGrant; readonly issued: IssuedRefresh }
  | { readonly kind: "refused"; readonly reason: string };

export function createAuthorizationCodes(
  db: Database,
  options: { readonly now?: () => number } = {},
): AuthorizationCodes {
  const now = options.now ?? Date.now;

  async function exchangeIn(tx: Database, pool: PoolRef, exchange: CodeExchange): Promise<Outcome> {
    const at = now();
    const [row] = await tx
      .select()
      .from(identityAuthorizationCodes)
      .where(
        and(
          eq(identityAuthorizationCodes.orgId, pool.orgId),
          eq(identityAuthorizationCodes.poolId, pool.poolId),
          eq(identityAuthorizationCodes.codeHash, hashOpaqueToken(exchange.code)),
        ),
      )
      .for("update");
    if (!row) return { kind: "refused", reason: "the authorization code is not known" };
    if (row.consumedAt !== 0) {
      if (row.familyId) await revoke(tx, pool, { sessionId: row.familyId }, "code_replay", at);
      return {
        kind: "refused",
        reason: "the authorization code was already used; the session it started has been revoked",
      };
    }
    const consume = (familyId: string | null) =>
      tx
        .update(identityAuthorizationCodes)
        .set({ consumedAt: at, familyId })
        .where(eq(identityAuthorizationCodes.codeHash, row.codeHash));
    const mismatch =
      row.expiresAt <= at
        ? "the authorization code has expired"
        : row.clientId !== exchange.clientId
          ? "client_id is not the one the code was issued to"
          : row.redirectUri !== exchange.redirectUri
            ? "redirect_uri is not the one of the authorization request"
            : !pkceMatches(exchange.codeVerifier, row.codeChallenge)
              ? "code_verifier does not match the code_challenge"
              : undefined;
    if (mismatch) {
      await consume(null);
      return { kind: "refused", reason: mismatch };
    }
    const grant: CodeGrant = {
      userId: row.userId,
      clientId: row.clientId,
      redirectUri: row.redirectUri,
      codeChallenge: row.codeChallenge,
      scope: row.scope,
      nonce: row.nonce,
      tenant: row.tenant,
      authTimeMs: row.authTime,
    };
    const issued = await startFamily(
      tx,
      pool,
      {
        userId: grant.userId,
        clientId: grant.clientId,
        tenant: grant.tenant,
        scope: grant.scope,
        authTimeMs: grant.authTimeMs,
      },
      at,
    );
    await consume(issued.session.id);
    return { kind: "granted", grant, issued };
  }

  return {
    async issue(pool, grant, executor = db) {
      const code = newOpaqueToken();
      await executor.insert(identityAuthorizationCodes).values({
        ...pool,
        codeHash: code.hash,
        userId: grant.userId,
        clientId: grant.clientId,
        redirectUri: grant.redirectUri,
        codeChallenge: grant.codeChallenge,
        scope: grant.scope,
        nonce: grant.nonce,
        tenant: grant.tenant,
        authTime: grant.authTimeMs,
        expiresAt: now() + AUTHORIZATION_CODE_TTL_MS,
      });
      return code.token;
    },

    async exchange(pool, exchange) {
      // Decided inside, thrown outside: consuming the code and revoking on replay must commit.
      const outcome = await db.transaction((tx) => exchangeIn(tx, pool, exchange));
      if (outcome.kind === "refused") throw new GrantError("invalid_grant", outcome.reason);
      return { grant: outcome.grant, issued: outcome.issued };
    },
  };
}
