import { ConnectError } from "@connectrpc/connect";
import { errorToJson } from "@connectrpc/connect/protocol-connect";
import { renderErrorBody } from "../rest/error-body.js";
import { contentTypeFor } from "../rest/media-type.js";
import type { ErrorBodyForm } from "../rest/rest-plane.js";
import { normalizeError, type NormalizedError, type UnexpectedErrorSink } from "./normalize-error.js";

/**
 * Writes a normalised error in a plane's body shape. A renderer only shapes the body: status,
 * code, message and headers were decided by the normaliser.
 */
export type ErrorRenderer = (error: NormalizedError) => { readonly mediaType: string; readonly text: string };

/** The RPC planes' shape, on their HTTP routes as over Connect: `{code, message, details}`. */
export const renderConnectError: ErrorRenderer = (error) => {
  const connectError = new ConnectError(error.message, error.code);
  connectError.details = [...error.details];
  return { mediaType: "application/json", text: JSON.stringify(errorToJson(connectError, undefined)) };
};

/** A REST-only plane's shape, as its document declares it for the operation (`oauth`, `error`, ...). */
export function renderErrorForm(form: ErrorBodyForm): ErrorRenderer {
  return (error) => renderErrorBody(form, error);
}

/** An error answer, whole. */
export interface ErrorAnswer {
  readonly status: number;
  readonly header: Headers;
  readonly body: Uint8Array;
}

export interface ErrorAnswerContext {
  readonly requestId: string;
  readonly render: ErrorRenderer;
  /** Gets the original of an error that is not a deliberate API error, to log it. */
  readonly onUnexpected?: UnexpectedErrorSink | undefined;
  /** Headers already set for the answer (by middleware: CORS, rate limits); the error's own win. */
  readonly header?: Headers | undefined;
}

const encoder = new TextEncoder();

/**
 * The one way both HTTP stacks answer a failure, whether the exchange refused the request
 * (404, 405, 400, 413, 415) or a handler, a decoder or something underneath threw: normalised
 * (status, code, capped message, `internal` with the request id for anything unexpected), then
 * written in the plane's declared shape.
 */
export function answerError(error: unknown, context: ErrorAnswerContext): ErrorAnswer {
  const normalized = normalizeError(error, context.requestId, context.onUnexpected);
  const header = new Headers(context.header);
  normalized.headers.forEach((value, name) => header.set(name, value));
  const { mediaType, text } = context.render(normalized);
  header.set("content-type", contentTypeFor(mediaType));
  return { status: normalized.status, header, body: encoder.encode(text) };
}
