/**
 * A request that does not fit its operation's schemas, with the field kept apart so an operation
 * that validates in its handler can decide on it (`query.redirect_uri` is an error page, any other
 * field a redirect back to the client). The normaliser answers it as INVALID_ARGUMENT.
 *
 * Not a ConnectError subclass: ConnectError's `instanceof` recognises errors by name, which a
 * subclass would either lose or share with every other ConnectError.
 */
export class InvalidRequestError extends Error {
  override name = "InvalidRequestError";
  /** As a caller wrote it: `body.redirect_uris[2]`, `query.limit`. */
  readonly field: string;
  /** What is wrong with it: `must be a URI`. */
  readonly reason: string;

  constructor(field: string, reason: string) {
    super(`${field}: ${reason}`);
    this.field = field;
    this.reason = reason;
  }
}
