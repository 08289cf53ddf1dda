import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityIssuerImplementation } from "../../../../../gen/openapi/identity-issuer/handler.js";
import type { AccessTokenClaims } from "../../../../../gen/openapi/identity-issuer/types.js";
import { verifyAccessToken } from "../pool-tokens.js";
import { bearerTokenOf } from "./bearer-token.js";
import { poolOf, type IssuerDeps } from "./issuer-context.js";
import { issuerUserOf } from "./issuer-user.js";

const INVALID_TOKEN = { "www-authenticate": 'Bearer error="invalid_token"' } as const;

/** GET /user and POST /logout: what a holder of the pool's tokens can do with them. */
export function createSessionHandlers(
  deps: IssuerDeps,
): Pick<IdentityIssuerImplementation, "getCurrentUser" | "logout"> {
  const { services } = deps;
  return {
    async getCurrentUser(_input, context) {
      const pool = poolOf(context);
      const token = bearerTokenOf(context.requestHeader.get("authorization"));
      if (!token)
        return {
          status: 401,
          headers: INVALID_TOKEN,
          body: { error: "authorization: send Authorization: Bearer <access token of this pool>" },
        };
      let claims;
      try {
        claims = await verifyAccessToken(services.keys, pool.issuer, token, services.now());
      } catch (error) {
        if (error instanceof ConnectError && error.code === Code.Unauthenticated)
          return { status: 401, headers: INVALID_TOKEN, body: { error: error.rawMessage } };
        throw error;
      }
      const user = await pool.users.get(claims.sub, { includeDeleted: true });
      if (!user || user.deletedAt !== 0) return { status: 404, body: { error: "the user no longer exists" } };
      if (user.banned) return { status: 403, body: { error: "the user is banned" } };
      return {
        status: 200,
        headers: { "cache-control": "no-store" },
        body: { claims: claims as unknown as AccessTokenClaims, user: issuerUserOf(user) },
      };
    },

    async logout(input, context) {
      // Idempotent, like RFC 7009 revocation: an unknown or already revoked token also answers 200.
      await services.families.revokeByToken(poolOf(context).ref, input.body.refresh_token);
      return { status: 200, body: {} };
    },
  };
}
