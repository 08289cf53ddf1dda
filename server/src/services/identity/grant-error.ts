import { Code, ConnectError } from "@connectrpc/connect";

/** The RFC 6749 section 5.2 error codes the token endpoint answers, plus the issuer's own statuses. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_grant"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "access_denied"
  | "temporarily_unavailable";

const codeOf: Record<OAuthErrorCode, Code> = {
  invalid_request: Code.InvalidArgument,
  // RFC 6749 gives invalid_grant 400; the issuer answers bad credentials with 401 as the
  // specification's error table says.
  invalid_grant: Code.Unauthenticated,
  unsupported_grant_type: Code.InvalidArgument,
  invalid_scope: Code.InvalidArgument,
  access_denied: Code.PermissionDenied,
  temporarily_unavailable: Code.Unavailable,
};

/**
 * A refused grant: a ConnectError (so the status comes from the one code-to-status table) that also
 * carries the RFC 6749 `error` code the token endpoint writes into its body.
 */
export class GrantError extends ConnectError {
  readonly oauthError: OAuthErrorCode;

  constructor(oauthError: OAuthErrorCode, description: string) {
    super(description, codeOf[oauthError]);
    this.oauthError = oauthError;
  }

  /**
   * ConnectError answers `instanceof` itself (by prototype, or by `name === "ConnectError"` and its
   * fields, so errors from another copy of the library pass), and subclasses inherit that answer.
   * The name therefore stays "ConnectError", and this class answers for itself by prototype.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return (
      typeof value === "object" && value !== null && Object.prototype.isPrototypeOf.call(GrantError.prototype, value)
    );
  }
}
