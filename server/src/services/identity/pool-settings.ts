import type { JsonObject } from "./identity-schema.js";

/**
 * The knobs of a pool the issuer acts on, read from its `settings` and `policies` documents
 * (snake_case members, as the admin API documents them):
 * - `settings.redirect_uris`: the only redirect URIs of the code flow, matched exactly; none by
 *   default, so the code flow is closed until one is listed.
 * - `settings.signup_enabled` (default true) and `settings.email_verification_required`
 *   (default false: sign-up returns a session and sign-in does not wait for the link).
 * - `policies.password.min_length` (default 8, NIST SP 800-63B's floor, at most 128).
 * The documents are checked when written; reading is lenient, so a member of the wrong type
 * falls back to its default rather than taking the pool down.
 */
export interface PoolSettings {
  readonly redirectUris: readonly string[];
  readonly signupEnabled: boolean;
  readonly emailVerificationRequired: boolean;
  readonly passwordMinLength: number;
}

export const DEFAULT_PASSWORD_MIN_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 128;

export function readPoolSettings(settings: JsonObject, policies: JsonObject): PoolSettings {
  const uris = settings.redirect_uris;
  const password = policies.password;
  const minLength = typeof password === "object" && password !== null ? (password as JsonObject).min_length : undefined;
  return {
    // A URI that does not parse (stored before writes were checked) cannot be redirected to: it is not listed.
    redirectUris: Array.isArray(uris)
      ? uris.filter((uri): uri is string => typeof uri === "string" && URL.canParse(uri))
      : [],
    signupEnabled: typeof settings.signup_enabled === "boolean" ? settings.signup_enabled : true,
    emailVerificationRequired: settings.email_verification_required === true,
    passwordMinLength:
      typeof minLength === "number" &&
      Number.isInteger(minLength) &&
      minLength >= DEFAULT_PASSWORD_MIN_LENGTH &&
      minLength <= MAX_PASSWORD_LENGTH
        ? minLength
        : DEFAULT_PASSWORD_MIN_LENGTH,
  };
}
