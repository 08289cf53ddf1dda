import { Code, ConnectError } from "@connectrpc/connect";
import type {
  IdentityIssuerContext,
  IdentityIssuerImplementation,
} from "../../../../../gen/openapi/identity-issuer/handler.js";
import type { GetUserInfoResult } from "../../../../../gen/openapi/identity-issuer/types.js";
import { verifyAccessToken } from "../pool-tokens.js";
import { bearerChallenge, bearerTokenOf } from "./bearer-token.js";
import { poolOf, type IssuerDeps } from "./issuer-context.js";

const NO_STORE = { "cache-control": "no-store" } as const;

/**
 * GET and POST /userinfo: OpenID Connect Core section 5.3's UserInfo endpoint, the claims about
 * the user as they are now, in the flat shape client libraries read. The token comes in the
 * Authorization header, or (POST) as the form member `access_token`, RFC 6750 sections 2.1 and
 * 2.2. A token whose user has since been deleted or banned is answered as an invalid token.
 */
export function createUserInfoHandlers(
  deps: IssuerDeps,
): Pick<IdentityIssuerImplementation, "getUserInfo" | "postUserInfo"> {
  const { services } = deps;

  async function userInfo(context: IdentityIssuerContext, formToken: string | undefined): Promise<GetUserInfoResult> {
    const pool = poolOf(context);
    const headerToken = bearerTokenOf(context.requestHeader.get("authorization"));
    if (headerToken !== undefined && formToken !== undefined) {
      return {
        status: 400,
        headers: NO_STORE,
        body: {
          error: "invalid_request",
          error_description: "send the access token one way: the Authorization header or access_token",
        },
      };
    }
    const token = headerToken ?? formToken;
    if (token === undefined) {
      const description = "authorization: send Authorization: Bearer <access token of this pool>";
      return {
        status: 401,
        headers: { ...NO_STORE, "www-authenticate": bearerChallenge() },
        body: { error: "invalid_request", error_description: description },
      };
    }
    const invalid = (description: string): GetUserInfoResult => ({
      status: 401,
      headers: { ...NO_STORE, "www-authenticate": bearerChallenge({ code: "invalid_token", description }) },
      body: { error: "invalid_token", error_description: description },
    });
    let subject: string;
    try {
      subject = (await verifyAccessToken(services.keys, pool.issuer, token, services.now())).sub;
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.Unauthenticated) return invalid(error.rawMessage);
      throw error;
    }
    const user = await pool.users.get(subject);
    if (!user) return invalid("the token's user no longer exists");
    if (user.banned) return invalid("the token's user is banned");
    return {
      status: 200,
      headers: NO_STORE,
      body: { sub: user.id, email: user.email, email_verified: user.emailVerified },
    };
  }

  return {
    getUserInfo: (_input, context) => userInfo(context, undefined),
    postUserInfo: (input, context) => userInfo(context, input.body?.access_token),
  };
}
