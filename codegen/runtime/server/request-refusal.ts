/**
 * Why the exchange refused a request before any handler saw it. The status and code each kind is
 * answered with are decided by the normaliser (normalize-error.ts), like every other error's.
 */
export type RefusalKind = "not-found" | "method-not-allowed" | "bad-path" | "too-large" | "unsupported-media-type";

/**
 * A request the exchange (rest-exchange.ts) would not hand to a handler: unknown path, known path
 * with another method, malformed path segment, body over the limit, body of a media type the
 * route does not take. Not a ConnectError: its HTTP status (405, 413, 415) is not the one
 * Connect's code table gives its code.
 */
export class RequestRefusal extends Error {
  override name = "RequestRefusal";
  readonly kind: RefusalKind;
  /** Headers the answer carries: `allow` on a 405, `accept` on a 415. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(kind: RefusalKind, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.kind = kind;
    this.headers = headers;
  }
}
