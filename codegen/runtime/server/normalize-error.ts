import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import { InvalidRequestError } from "./invalid-request-error.js";
import { RequestRefusal, type RefusalKind } from "./request-refusal.js";

/** An error reduced to what every plane's error body is written from. */
export interface NormalizedError {
  readonly status: number;
  readonly code: Code;
  readonly message: string;
  /** Headers the error carries (`retry-after`, `www-authenticate`, `allow`). */
  readonly headers: Headers;
  /** The error details a ConnectError carries, for the planes whose body has room for them. */
  readonly details: ConnectError["details"];
}

/** Gets the original of every error that is not a deliberate API error, to log it. */
export type UnexpectedErrorSink = (error: unknown) => void;

/** Where an unexpected error happened, for its log line. */
export interface UnexpectedErrorContext {
  /** `/platform.script.v1.ScriptService/ListThreads`, or a REST plane's operationId. */
  readonly procedure: string;
  readonly requestId: string;
}

/** What a plane is given to log unexpected errors with. */
export type UnexpectedErrorHandler = (error: unknown, context: UnexpectedErrorContext) => void;

/** The id the listener gave the request (`x-request-id`), or a new one outside a listener. */
export function requestIdOf(header: Headers): string {
  return header.get("x-request-id") ?? randomUUID();
}

/**
 * Codes no handler answers on purpose: an error with one of them is a bug or a failure of
 * something underneath (the database, a library), and its text is about that, not the request.
 */
const UNEXPECTED_CODES: ReadonlySet<Code> = new Set([Code.Unknown, Code.Internal, Code.DataLoss]);

/**
 * Longest message an answer carries. A message may quote what the caller sent (an identifier, a
 * value that failed to parse): a 5 MB identifier must not come back whole in a 404.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1024;

/**
 * The one normaliser of every plane and protocol. A deliberate API error (a ConnectError with a
 * code a handler chooses, or a request that failed validation) keeps its code, message and
 * metadata. Anything else (a database error, a TypeError, a ConnectError with code internal or
 * unknown) is answered INTERNAL with a fixed message and the request id, because its text may
 * hold SQL, bound parameters, paths or secrets; `onUnexpected` gets the original to log it.
 */
export function toApiError(error: unknown, requestId: string, onUnexpected?: UnexpectedErrorSink): ConnectError {
  // A call passes more than one boundary (an interceptor, then the HTTP route's writer): the
  // first one answers for it, and the rest see an error that was answered already.
  if (error instanceof ConnectError && answered.has(error)) return error;
  if (error instanceof InvalidRequestError) return new ConnectError(cutMessage(error.message), Code.InvalidArgument);
  if (error instanceof ConnectError && !UNEXPECTED_CODES.has(error.code)) {
    return error.rawMessage.length > MAX_ERROR_MESSAGE_CHARS
      ? new ConnectError(cutMessage(error.rawMessage), error.code, error.metadata)
      : error;
  }
  onUnexpected?.(error);
  const internal = new ConnectError(internalErrorMessage(requestId), Code.Internal);
  answered.add(internal);
  return internal;
}

/** The INTERNAL answers this normaliser made, which any later boundary passes on unchanged. */
const answered = new WeakSet<ConnectError>();

/** What a caller reads for an unexpected error: nothing of it but the id that finds it in the log. */
export function internalErrorMessage(requestId: string): string {
  return `internal error (request id ${requestId})`;
}

/**
 * The status and code of each refusal of the exchange, the same on every HTTP stack: the HTTP
 * semantics (405, 413, 415) decide the status, the code is the nearest Connect code.
 */
const REFUSALS: Readonly<Record<RefusalKind, { status: number; code: Code }>> = {
  "not-found": { status: 404, code: Code.NotFound },
  "method-not-allowed": { status: 405, code: Code.Unimplemented },
  "bad-path": { status: 400, code: Code.InvalidArgument },
  "too-large": { status: 413, code: Code.ResourceExhausted },
  "unsupported-media-type": { status: 415, code: Code.InvalidArgument },
};

/**
 * The HTTP stacks' view of `toApiError`, which every REST answer is written from: the status of a
 * refusal from the table above, of any other error from the code-to-status table the RPC planes
 * use; the message cut and, for an unexpected error, nothing but the request id.
 */
export function normalizeError(error: unknown, requestId: string, onUnexpected?: UnexpectedErrorSink): NormalizedError {
  if (error instanceof RequestRefusal) {
    const { status, code } = REFUSALS[error.kind];
    return { status, code, message: cutMessage(error.message), headers: new Headers(error.headers), details: [] };
  }
  const apiError = toApiError(error, requestId, onUnexpected);
  return {
    status: codeToHttpStatus(apiError.code),
    code: apiError.code,
    message: apiError.rawMessage,
    headers: new Headers(apiError.metadata),
    details: apiError.details,
  };
}

function cutMessage(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : message;
}
