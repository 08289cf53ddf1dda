import type { IdentityIssuerImplementation } from "../../../../../gen/openapi/identity-issuer/handler.js";
import { renderResetPage, renderVerifyPage } from "./hosted-forms.js";
import { pageBrandingOf, renderMessagePage } from "./hosted-page.js";
import { poolOf } from "./issuer-context.js";

/**
 * The pages the e-mailed links open. Opening one only shows a form: the token is used when the
 * form is posted, so a mail scanner that follows links uses nothing up.
 */
export function createPageHandlers(): Pick<IdentityIssuerImplementation, "showResetPage" | "showVerifyPage"> {
  return {
    async showResetPage(input, context) {
      const pool = poolOf(context);
      const branding = pageBrandingOf(pool.record);
      if ("invalid" in input)
        return {
          status: 400,
          body: renderMessagePage(branding, "Password reset", "This link is incomplete: it has no token.", "error")
            .html,
          headers: { "cache-control": "no-store" },
        };
      const page = renderResetPage(branding, { token: input.query.token, minLength: pool.settings.passwordMinLength });
      return { status: 200, body: page.html, headers: page.headers };
    },

    async showVerifyPage(input, context) {
      const pool = poolOf(context);
      const branding = pageBrandingOf(pool.record);
      if ("invalid" in input)
        return {
          status: 400,
          body: renderMessagePage(branding, "E-mail confirmation", "This link is incomplete: it has no token.", "error")
            .html,
          headers: { "cache-control": "no-store" },
        };
      const page = renderVerifyPage(branding, { token: input.query.token });
      return { status: 200, body: page.html, headers: page.headers };
    },
  };
}
