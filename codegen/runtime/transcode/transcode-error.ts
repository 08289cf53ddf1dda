import { Code, ConnectError } from "@connectrpc/connect";

/** Malformed input on an HTTP route: always INVALID_ARGUMENT (400), and the message names the culprit. */
export function invalidArgument(message: string, cause?: unknown): ConnectError {
  return new ConnectError(message, Code.InvalidArgument, undefined, undefined, cause);
}
