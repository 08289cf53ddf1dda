import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import type { AuthorizationCodes } from "./authorization-codes.js";
import { GrantError } from "./grant-error.js";
import { identityLoginTransactions } from "./identity-schema.js";
import { hashOpaqueToken, newOpaqueToken } from "./opaque-token.js";
import type { PoolRef } from "./pool-store.js";

export const LOGIN_TRANSACTION_TTL_MS = 30 * 60_000;

/** A checked GET /authorize request, kept while the user signs in on the hosted page. */
export interface AuthorizationRequest {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string;
  readonly codeChallenge: string;
  readonly scope: string;
  readonly nonce: string;
  /** The tenant slug to pin, "" for none. */
  readonly tenant: string;
}

export interface PendingLogin {
  readonly request: AuthorizationRequest;
  readonly expired: boolean;
}

/**
 * Login transactions: the authorization request between GET /authorize and the hosted login form.
 * The page carries an opaque handle (stored as its hash); the transaction lives 30 minutes and
 * completes once, issuing the authorization code in the same transaction.
 */
export interface LoginTransactions {
  begin(pool: PoolRef, request: AuthorizationRequest): Promise<string>;
  /** The pending request, or undefined when the handle is unknown or already completed. */
  get(pool: PoolRef, handle: string): Promise<PendingLogin | undefined>;
  /**
   * Completes the login of `userId`: answers the code and the request to redirect back to. An
   * expired transaction throws {@link GrantError} `access_denied` with `login_session_expired`;
   * an unknown or completed one throws NOT_FOUND.
   */
  complete(
    pool: PoolRef,
    handle: string,
    user: { readonly userId: string; readonly authTimeMs: number },
  ): Promise<{ readonly code: string; readonly request: AuthorizationRequest }>;
}

export function createLoginTransactions(
  db: Database,
  codes: AuthorizationCodes,
  options: { readonly now?: () => number } = {},
): LoginTransactions {
  const now = options.now ?? Date.now;
  const byHandle = (pool: PoolRef, handle: string) =>
    and(
      eq(identityLoginTransactions.orgId, pool.orgId),
      eq(identityLoginTransactions.poolId, pool.poolId),
      eq(identityLoginTransactions.id, hashOpaqueToken(handle)),
    );

  return {
    async begin(pool, request) {
      const handle = newOpaqueToken();
      await db
        .insert(identityLoginTransactions)
        .values({ ...pool, id: handle.hash, ...request, expiresAt: now() + LOGIN_TRANSACTION_TTL_MS });
      return handle.token;
    },

    async get(pool, handle) {
      const [row] = await db.select().from(identityLoginTransactions).where(byHandle(pool, handle));
      if (!row || row.completedAt !== 0) return undefined;
      return { request: requestOf(row), expired: row.expiresAt <= now() };
    },

    async complete(pool, handle, user) {
      const at = now();
      const outcome = await db.transaction(async (tx) => {
        const [row] = await tx.select().from(identityLoginTransactions).where(byHandle(pool, handle)).for("update");
        if (!row || row.completedAt !== 0) return undefined;
        if (row.expiresAt <= at) return "expired" as const;
        await tx
          .update(identityLoginTransactions)
          .set({ completedAt: at })
          .where(eq(identityLoginTransactions.id, row.id));
        const request = requestOf(row);
        const code = await codes.issue(pool, { ...request, userId: user.userId, authTimeMs: user.authTimeMs }, tx);
        return { code, request };
      });
      if (outcome === undefined)
        throw new ConnectError("the login transaction is unknown or already completed", Code.NotFound);
      if (outcome === "expired") throw new GrantError("access_denied", "login_session_expired");
      return outcome;
    },
  };
}

function requestOf(row: typeof identityLoginTransactions.$inferSelect): AuthorizationRequest {
  return {
    clientId: row.clientId,
    redirectUri: row.redirectUri,
    state: row.state,
    codeChallenge: row.codeChallenge,
    scope: row.scope,
    nonce: row.nonce,
    tenant: row.tenant,
  };
}
