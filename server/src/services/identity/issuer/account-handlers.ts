import { Code, ConnectError } from "@connectrpc/connect";
import type {
  IdentityIssuerContext,
  IdentityIssuerImplementation,
} from "../../../../../gen/openapi/identity-issuer/handler.js";
import { recover, resetPassword, signup, verifyEmail } from "../account-flows.js";
import type { PoolContext } from "../pool-context.js";
import { renderResetPage } from "./hosted-forms.js";
import { pageBrandingOf, renderMessagePage, type RenderedPage } from "./hosted-page.js";
import { isFormPost, poolOf, type IssuerDeps } from "./issuer-context.js";
import { issuerUserOf } from "./issuer-user.js";

/** What recover answers whoever asks, so the answer tells nothing about who is registered. */
const RECOVER_NOTICE =
  "If this address belongs to an account, a link to choose a new password is on its way. It works for 30 minutes.";

type Outcome = { readonly status: 200 | 400 | 401; readonly message: string };

/**
 * Sign-up, recovery, reset and verification. The last three take a hosted page's form post as well
 * as JSON, and answer a form with a page and JSON with JSON.
 */
export function createAccountHandlers(
  deps: IssuerDeps,
): Pick<IdentityIssuerImplementation, "signup" | "recoverPassword" | "resetPassword" | "verifyEmail"> {
  const { services } = deps;
  return {
    async signup(input, context) {
      const { user, session } = await signup(services, poolOf(context), input.body);
      return {
        status: 200,
        body: { user: issuerUserOf(user), ...(session ? { session: { ...session, expires_in: 900 } } : {}) },
      };
    },

    async recoverPassword(input, context) {
      const pool = poolOf(context);
      if ("invalid" in input)
        return answer(pool, context, "Password reset", { status: 400, message: input.invalid.message });
      await recover(services, pool, input.body.email);
      return answer(pool, context, "Check your e-mail", { status: 200, message: RECOVER_NOTICE });
    },

    async resetPassword(input, context) {
      const pool = poolOf(context);
      const token =
        typeof (input.body as { token?: unknown } | undefined)?.token === "string"
          ? (input.body as { token: string }).token
          : "";
      const outcome: Outcome =
        "invalid" in input
          ? { status: 400, message: input.invalid.message }
          : await settle(
              () => resetPassword(services, pool, input.body),
              "Your password is changed. Sign in with it from the application.",
            );
      if (outcome.status === 400 && isFormPost(context) && token !== "") {
        // The person can fix the password on the same page; the token was not used.
        const page = renderResetPage(pageBrandingOf(pool.record), {
          token,
          minLength: pool.settings.passwordMinLength,
          error: outcome.message,
        });
        return { status: 400, contentType: "text/html", body: pageBody(context, page) };
      }
      return answer(pool, context, outcome.status === 200 ? "Password changed" : "Password reset", outcome);
    },

    async verifyEmail(input, context) {
      const pool = poolOf(context);
      const outcome: Outcome =
        "invalid" in input
          ? { status: 400, message: input.invalid.message }
          : await settle(() => verifyEmail(services, pool, input.body.token), "Your e-mail address is confirmed.");
      return answer(pool, context, outcome.status === 200 ? "Address confirmed" : "E-mail confirmation", outcome);
    },
  };
}

/** Runs an account step; a refused token or password becomes the answer rather than an error. */
async function settle(step: () => Promise<unknown>, done: string): Promise<Outcome> {
  try {
    await step();
    return { status: 200, message: done };
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.InvalidArgument)
      return { status: 400, message: error.rawMessage };
    if (error instanceof ConnectError && error.code === Code.Unauthenticated)
      return { status: 401, message: error.rawMessage };
    throw error;
  }
}

/** A page for a form post, JSON otherwise: `{}` on success, `{error}` on failure. */
function answer(pool: PoolContext, context: IdentityIssuerContext, title: string, outcome: Outcome) {
  if (isFormPost(context)) {
    const page = renderMessagePage(
      pageBrandingOf(pool.record),
      title,
      outcome.message,
      outcome.status === 200 ? "notice" : "error",
    );
    return { status: outcome.status, contentType: "text/html" as const, body: pageBody(context, page) };
  }
  if (outcome.status === 200) return { status: 200 as const, contentType: "application/json" as const, body: {} };
  return { status: outcome.status, contentType: "application/json" as const, body: { error: outcome.message } };
}

/** The page's HTML; its security headers go on the response whatever status it answers. */
function pageBody(context: IdentityIssuerContext, page: RenderedPage): string {
  for (const [name, value] of Object.entries(page.headers)) context.responseHeader.set(name, value);
  return page.html;
}
