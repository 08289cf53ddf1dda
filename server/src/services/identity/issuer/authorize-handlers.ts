import { ConnectError } from "@connectrpc/connect";
import type { IdentityIssuerImplementation } from "../../../../../gen/openapi/identity-issuer/handler.js";
import { GrantError } from "../grant-error.js";
import type { AuthorizationRequest } from "../login-transactions.js";
import { verifyPassword } from "../password-hashing.js";
import { localSignIn, type PoolContext } from "../pool-context.js";
import { assertMaySignIn } from "../token-grants.js";
import { renderLoginPage } from "./hosted-forms.js";
import { pageBrandingOf, renderMessagePage, type RenderedPage } from "./hosted-page.js";
import { poolOf, type IssuerDeps } from "./issuer-context.js";

/**
 * The authorization-code flow's browser half: GET /authorize checks the request and starts a
 * login transaction, the hosted login page shows it, and its form checks the credentials and
 * sends the browser back to the client with a code. A redirect URI that is not listed exactly
 * is never redirected to; every later error goes back to it with RFC 6749 codes and RFC 9207 `iss`.
 */
export function createAuthorizeHandlers(
  deps: IssuerDeps,
): Pick<IdentityIssuerImplementation, "authorize" | "showLoginPage" | "submitLogin"> {
  return {
    async authorize(input, context) {
      const pool = poolOf(context);
      const query = input.query as Readonly<Record<string, unknown>>;
      const redirectUri = typeof query.redirect_uri === "string" ? query.redirect_uri : undefined;
      if (redirectUri === undefined || !pool.settings.redirectUris.includes(redirectUri)) {
        const reason =
          redirectUri === undefined
            ? "redirect_uri is missing"
            : "redirect_uri is not one of this pool's registered redirect URIs";
        return {
          status: 400,
          body: errorPage(pool, "Invalid sign-in request", reason).html,
          headers: { "cache-control": "no-store" },
        };
      }
      const back = { redirectUri, state: typeof query.state === "string" ? query.state : "" };
      if ("invalid" in input) {
        const code =
          input.invalid.field === "query.response_type" && query.response_type !== undefined
            ? "unsupported_response_type"
            : "invalid_request";
        return {
          status: 302,
          headers: {
            location: redirectBack(pool, back, { error: code, error_description: input.invalid.message }),
            "cache-control": "no-store",
          },
        };
      }
      const q = input.query;
      if (q.tenant && !(await pool.tenants.get(q.tenant))) {
        return {
          status: 302,
          headers: {
            location: redirectBack(pool, back, {
              error: "invalid_request",
              error_description: `tenant "${q.tenant}" does not exist`,
            }),
            "cache-control": "no-store",
          },
        };
      }
      const request: AuthorizationRequest = {
        clientId: q.client_id,
        redirectUri,
        state: q.state,
        codeChallenge: q.code_challenge,
        scope: q.scope ?? "",
        nonce: q.nonce ?? "",
        tenant: q.tenant ?? "",
      };
      const handle = await deps.transactions.begin(pool.ref, request);
      return {
        status: 302,
        headers: {
          location: `${pool.issuer.issuer}/login?transaction=${encodeURIComponent(handle)}`,
          "cache-control": "no-store",
        },
      };
    },

    async showLoginPage(input, context) {
      const pool = poolOf(context);
      const handle = typeof input.query.transaction === "string" ? input.query.transaction : "";
      const pending = await pendingLogin(deps, pool, handle);
      if (!pending)
        return invalidLogin(
          pool,
          "This sign-in link is unknown or was already used. Start again from the application.",
        );
      if (pending.expired) return expiredLogin(pool, pending.request, 302);
      const page = loginPage(pool, handle, pending.request, {});
      return { status: 200, body: page.html, headers: page.headers };
    },

    async submitLogin(input, context) {
      const pool = poolOf(context);
      const body = (input.body ?? {}) as Readonly<Record<string, unknown>>;
      const handle = typeof body.transaction === "string" ? body.transaction : "";
      const pending = await pendingLogin(deps, pool, handle);
      if (!pending)
        return invalidLogin(
          pool,
          "This sign-in form is unknown or was already used. Start again from the application.",
        );
      if (pending.expired) return expiredLogin(pool, pending.request, 303);
      const email = typeof body.email === "string" ? body.email : "";
      const again = (status: 400 | 401 | 403, error: string) => {
        const page = loginPage(pool, handle, pending.request, { email, error });
        return { status, body: page.html, headers: page.headers };
      };
      if ("invalid" in input) return again(400, input.invalid.message);
      if (!(await localSignIn(deps.services, pool.ref)).open)
        return again(403, "E-mail and password sign-in is disabled.");
      const user = await pool.users.findByEmail(input.body.email);
      const matches = await verifyPassword(user?.passwordHash, input.body.password);
      if (!user || !matches) return again(401, "Wrong e-mail address or password.");
      try {
        assertMaySignIn(pool, user);
      } catch (error) {
        return again(
          403,
          error instanceof GrantError && error.rawMessage.includes("verified")
            ? "Confirm your e-mail address first: follow the link we sent you."
            : "This account cannot sign in.",
        );
      }
      if (
        pending.request.tenant &&
        !(await pool.tenants.userTenants(user.id)).some((tenant) => tenant.slug === pending.request.tenant)
      ) {
        const location = redirectBack(pool, pending.request, {
          error: "access_denied",
          error_description: `the user is not a member of tenant "${pending.request.tenant}"`,
        });
        return { status: 303, headers: { location, "cache-control": "no-store" as const } };
      }
      try {
        const { code, request } = await deps.transactions.complete(pool.ref, handle, {
          userId: user.id,
          authTimeMs: deps.services.now(),
        });
        return {
          status: 303,
          headers: { location: redirectBack(pool, request, { code }), "cache-control": "no-store" },
        };
      } catch (error) {
        if (error instanceof GrantError) return expiredLogin(pool, pending.request, 303);
        if (error instanceof ConnectError)
          return invalidLogin(pool, "This sign-in form was already used. Start again from the application.");
        throw error;
      }
    },
  };
}

/**
 * The login transaction `handle` names, if it can go on: a redirect URI that does not parse (begun
 * from settings stored before writes were checked) has nowhere to send the browser back to.
 */
async function pendingLogin(deps: IssuerDeps, pool: PoolContext, handle: string) {
  const pending = handle === "" ? undefined : await deps.transactions.get(pool.ref, handle);
  return pending && URL.canParse(pending.request.redirectUri) ? pending : undefined;
}

/** The client's redirect URI with the answer's parameters, `state` and the RFC 9207 `iss` added. */
export function redirectBack(
  pool: PoolContext,
  request: Pick<AuthorizationRequest, "redirectUri" | "state">,
  params: Readonly<Record<string, string>>,
): string {
  const url = new URL(request.redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  if (request.state !== "") url.searchParams.set("state", request.state);
  url.searchParams.set("iss", pool.issuer.issuer);
  return url.toString();
}

/** The browser sent back to the client with `login_session_expired`, by `status` (a GET's 302, a POST's 303). */
function expiredLogin<S extends 302 | 303>(pool: PoolContext, request: AuthorizationRequest, status: S) {
  const location = redirectBack(pool, request, { error: "access_denied", error_description: "login_session_expired" });
  return { status, headers: { location, "cache-control": "no-store" as const } };
}

/** A page saying that the login transaction cannot go on, and how to start again. */
function invalidLogin(pool: PoolContext, message: string) {
  return {
    status: 400 as const,
    body: errorPage(pool, "Sign-in link not valid", message).html,
    headers: { "cache-control": "no-store" as const },
  };
}

function loginPage(
  pool: PoolContext,
  transaction: string,
  request: AuthorizationRequest,
  extra: { readonly email?: string; readonly error?: string },
): RenderedPage {
  return renderLoginPage(pageBrandingOf(pool.record), {
    transaction,
    ...extra,
    redirectOrigin: new URL(request.redirectUri).origin,
  });
}

function errorPage(pool: PoolContext, title: string, message: string): RenderedPage {
  return renderMessagePage(pageBrandingOf(pool.record), title, message, "error");
}
