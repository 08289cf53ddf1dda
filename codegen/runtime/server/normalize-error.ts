import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { InvalidRequestError } from "./invalid-request-error.js";

/** An error reduced to what every plane's error body is written from. */
export interface NormalizedError {
  readonly status: number;
  readonly code: Code;
  readonly message: string;
  /** Headers the error carries (`retry-after`, `www-authenticate`). */
  readonly headers: Headers;
}

/**
 * The one normaliser of the REST planes: a ConnectError keeps its code (and so its status, from the
 * same table the RPC planes use), its message and its metadata as headers; a request that failed
 * validation is INVALID_ARGUMENT with the field named. Anything else is a bug:
 * it answers 500 with a fixed message, because an unexpected error's text may hold internals
 * (SQL, paths) that a caller must not see; `onUnexpected` gets the original to log it.
 */
export function normalizeError(error: unknown, onUnexpected?: (error: unknown) => void): NormalizedError {
  if (error instanceof ConnectError) {
    return { status: codeToHttpStatus(error.code), code: error.code, message: error.rawMessage, headers: new Headers(error.metadata) };
  }
  if (error instanceof InvalidRequestError) {
    return { status: 400, code: Code.InvalidArgument, message: error.message, headers: new Headers() };
  }
  onUnexpected?.(error);
  return { status: 500, code: Code.Internal, message: "internal error", headers: new Headers() };
}
