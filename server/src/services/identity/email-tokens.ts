import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq, gt } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { identityEmailTokens, type EmailTokenPurpose } from "./identity-schema.js";
import { hashOpaqueToken, newOpaqueToken } from "./opaque-token.js";
import type { PoolRef } from "./pool-store.js";

/** How long an e-mailed link works: the verification link 3 days, a reset link 30 minutes. */
export const EMAIL_TOKEN_TTL_MS: Readonly<Record<EmailTokenPurpose, number>> = {
  verify: 3 * 24 * 3600 * 1000,
  reset: 30 * 60 * 1000,
  // Not in the specification: a week, time enough for an invited person to find the mail.
  invite: 7 * 24 * 3600 * 1000,
};

/**
 * The single-use tokens of e-mailed links, stored as their hash. Issuing a token voids the user's
 * earlier unused tokens of the same purpose, so only the newest link works. Consuming is one
 * conditional UPDATE: two clicks on one link cannot both succeed.
 */
export interface EmailTokens {
  /** Answers the token for the link. Pass a transaction to issue it alongside other writes. */
  issue(pool: PoolRef, userId: string, purpose: EmailTokenPurpose, db?: Database): Promise<string>;
  /** The user the token was for; UNAUTHENTICATED when it is unknown, used, expired or of another purpose. */
  consume(
    pool: PoolRef,
    token: string,
    purpose: EmailTokenPurpose,
    db?: Database,
  ): Promise<{ readonly userId: string }>;
}

export function createEmailTokens(db: Database, options: { readonly now?: () => number } = {}): EmailTokens {
  const now = options.now ?? Date.now;
  const inPool = (pool: PoolRef) =>
    and(eq(identityEmailTokens.orgId, pool.orgId), eq(identityEmailTokens.poolId, pool.poolId));

  return {
    async issue(pool, userId, purpose, executor = db) {
      const at = now();
      const token = newOpaqueToken();
      await executor
        .update(identityEmailTokens)
        .set({ consumedAt: at })
        .where(
          and(
            inPool(pool),
            eq(identityEmailTokens.userId, userId),
            eq(identityEmailTokens.purpose, purpose),
            eq(identityEmailTokens.consumedAt, 0),
          ),
        );
      await executor
        .insert(identityEmailTokens)
        .values({ ...pool, tokenHash: token.hash, userId, purpose, expiresAt: at + EMAIL_TOKEN_TTL_MS[purpose] });
      return token.token;
    },

    async consume(pool, token, purpose, executor = db) {
      const at = now();
      const [row] = await executor
        .update(identityEmailTokens)
        .set({ consumedAt: at })
        .where(
          and(
            inPool(pool),
            eq(identityEmailTokens.tokenHash, hashOpaqueToken(token)),
            eq(identityEmailTokens.purpose, purpose),
            eq(identityEmailTokens.consumedAt, 0),
            gt(identityEmailTokens.expiresAt, at),
          ),
        )
        .returning({ userId: identityEmailTokens.userId });
      if (!row) throw new ConnectError("the link is invalid, already used or expired", Code.Unauthenticated);
      return row;
    },
  };
}
