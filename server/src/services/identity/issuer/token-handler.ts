import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityIssuerImplementation } from "../../../../../gen/openapi/identity-issuer/handler.js";
import type { PasswordGrant, TokenRequest, TokenResult } from "../../../../../gen/openapi/identity-issuer/types.js";
import { GrantError } from "../grant-error.js";
import type { IdentityServices, PoolContext } from "../pool-context.js";
import { authorizationCodeGrant, passwordGrant, refreshGrant, type TokenResponse } from "../token-grants.js";
import { poolOf, type IssuerDeps } from "./issuer-context.js";

const GRANT_TYPES: ReadonlySet<string> = new Set(["authorization_code", "password", "refresh_token"]);
const NO_STORE = { "cache-control": "no-store" } as const;

/**
 * POST /token. Every refusal is an RFC 6749 section 5.2 body with the status the document gives
 * it; the grants themselves live in token-grants.ts.
 */
export function createTokenHandler(deps: IssuerDeps): Pick<IdentityIssuerImplementation, "token"> {
  return {
    async token(input, context) {
      const pool = poolOf(context);
      if ("invalid" in input) {
        const body =
          typeof input.body === "object" && input.body !== null ? (input.body as Record<string, unknown>) : {};
        const grantType = body.grant_type;
        if (typeof grantType === "string" && !GRANT_TYPES.has(grantType))
          return refusal(400, "unsupported_grant_type", `grant_type "${grantType}" is not supported`);
        return refusal(400, "invalid_request", input.invalid.message);
      }
      try {
        const tokens = await grant(deps.services, pool, input.body);
        return { status: 200, headers: { ...NO_STORE, pragma: "no-cache" }, body: { ...tokens, expires_in: 900 } };
      } catch (error) {
        if (error instanceof GrantError) return refusal(statusOf(error.code), error.oauthError, error.rawMessage);
        if (error instanceof ConnectError && error.code === Code.InvalidArgument)
          return refusal(400, "invalid_request", error.rawMessage);
        throw error;
      }
    },
  };
}

async function grant(services: IdentityServices, pool: PoolContext, body: TokenRequest): Promise<TokenResponse> {
  switch (body.grant_type) {
    case "authorization_code":
      return authorizationCodeGrant(services, pool, {
        code: body.code,
        clientId: body.client_id,
        redirectUri: body.redirect_uri,
        codeVerifier: body.code_verifier,
      });
    case "password":
      return passwordGrant(services, pool, {
        email: userNamed(body),
        password: body.password,
        ...(body.tenant ? { tenant: body.tenant } : {}),
        ...(body.client_id === undefined ? {} : { clientId: body.client_id }),
        ...(body.scope === undefined ? {} : { scope: body.scope }),
      });
    case "refresh_token":
      return refreshGrant(services, pool, {
        refreshToken: body.refresh_token,
        ...(body.client_id === undefined ? {} : { clientId: body.client_id }),
      });
    default:
      // The schema check should have refused it; a body that is not an object must not slip through.
      throw new ConnectError(
        "body: must be an object with grant_type authorization_code, password or refresh_token",
        Code.InvalidArgument,
      );
  }
}

/** The password grant's user: `email` as the specification names it, or `username` as RFC 6749 section 4.3.2 does. */
function userNamed(body: PasswordGrant): string {
  const { email, username } = body;
  if (email !== undefined && username !== undefined && email.trim().toLowerCase() !== username.trim().toLowerCase()) {
    throw new ConnectError("body.username: names another user than body.email; send one of them", Code.InvalidArgument);
  }
  const named = email ?? username;
  if (named === undefined)
    throw new ConnectError("body.email: is required (or body.username, as RFC 6749 names it)", Code.InvalidArgument);
  return named;
}

function statusOf(code: Code): 400 | 401 | 403 | 503 {
  switch (code) {
    case Code.Unauthenticated:
      return 401;
    case Code.PermissionDenied:
      return 403;
    case Code.Unavailable:
      return 503;
    default:
      return 400;
  }
}

function refusal(status: 400 | 401 | 403 | 503, error: string, description: string): TokenResult {
  if (status === 503)
    return {
      status,
      headers: { ...NO_STORE, "retry-after": 5 },
      body: { error: "temporarily_unavailable", error_description: description },
    };
  return { status, headers: NO_STORE, body: { error: error as "invalid_request", error_description: description } };
}
