import type { IdentityIssuerImplementation } from "../../../../../gen/openapi/identity-issuer/handler.js";
import type { Branding } from "../../../../../gen/openapi/identity-issuer/types.js";
import { pageBrandingOf } from "./hosted-page.js";
import { poolOf, type IssuerDeps } from "./issuer-context.js";

/** Discovery, the JWKS and branding: public documents any client or verifier may cache. */
export function createDiscoveryHandlers(
  deps: IssuerDeps,
): Pick<IdentityIssuerImplementation, "getOpenidConfiguration" | "getJwks" | "getBranding"> {
  return {
    async getOpenidConfiguration(_input, context) {
      const { issuer } = poolOf(context).issuer;
      return {
        status: 200,
        headers: { "cache-control": "max-age=300" },
        body: {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/.well-known/jwks.json`,
          userinfo_endpoint: `${issuer}/userinfo`,
          scopes_supported: ["openid"],
          response_types_supported: ["code"],
          response_modes_supported: ["query"],
          grant_types_supported: ["password", "refresh_token", "authorization_code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["EdDSA"],
          token_endpoint_auth_methods_supported: ["none"],
          code_challenge_methods_supported: ["S256"],
          claims_supported: ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "sid", "email", "email_verified"],
          authorization_response_iss_parameter_supported: true,
        },
      };
    },

    async getJwks(_input, context) {
      const { keys } = await deps.services.keys.jwks(poolOf(context).ref);
      return {
        status: 200,
        headers: { "cache-control": "max-age=300" },
        body: {
          keys: keys.map((key) => ({ kty: "OKP", crv: "Ed25519", x: key.x, kid: key.kid, use: "sig", alg: "EdDSA" })),
        },
      };
    },

    async getBranding(_input, context) {
      const pool = poolOf(context);
      const branding = pageBrandingOf(pool.record);
      const body: Branding = {
        display_name: branding.displayName,
        ...(branding.logoUrl ? { logo_url: branding.logoUrl } : {}),
        ...(branding.faviconUrl ? { favicon_url: branding.faviconUrl } : {}),
        ...(branding.primaryColor ? { primary_color: branding.primaryColor } : {}),
        ...(branding.pageBackgroundColor ? { page_background_color: branding.pageBackgroundColor } : {}),
        password_min_length: pool.settings.passwordMinLength,
        signup_enabled: pool.settings.signupEnabled,
      };
      return { status: 200, headers: { "cache-control": "max-age=60" }, body };
    },
  };
}
