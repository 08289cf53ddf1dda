import type { ContentObject, ReferenceObject, SchemaObject } from "openapi3-ts/oas31";
import type { StreamFraming } from "../../../runtime/http-route.js";

/** Media types of server streams on HTTP routes. */
export const streamMediaTypes = { sse: "text/event-stream", ndjson: "application/x-ndjson" } as const;

const errorRef = { $ref: "#/components/schemas/platform.Error" };

/** The final frame of a failed stream: the SSE `error` event's data is the error body itself, the NDJSON line wraps it. */
const errorFrames: Record<StreamFraming, SchemaObject | ReferenceObject> = {
  sse: errorRef,
  ndjson: { type: "object", properties: { error: errorRef }, required: ["error"] },
};

/**
 * How a stream that folds its failures into a last message (platform.api.v1.stream_error_event)
 * ends, for its document: the JSON path of the field that holds the error's message, and the
 * JSON name of the oneof member it sits in.
 */
export interface FoldedStreamEnd {
  readonly jsonPath: string;
  readonly member: string;
}

/**
 * The content of a streamed response. A stream is no single JSON document, and OpenAPI 3.1 has no
 * keyword for the schema of one frame (3.2's `itemSchema` is not read by today's linters), so the
 * `schema` is that of one message frame and `x-stream-framing` says how frames follow each other;
 * `x-stream-error-schema` is the schema of the final error frame. Both framings are listed: the
 * declared one first, and the other one, which a client gets by asking for it in `Accept`.
 */
export function streamContent(
  declared: StreamFraming,
  frame: SchemaObject | ReferenceObject,
  folded?: FoldedStreamEnd,
): ContentObject {
  // A folding stream's every frame, the last included, is one message: one framing, and
  // `x-stream-error-event` in place of an error frame's schema.
  if (folded) {
    return {
      [streamMediaTypes[declared]]: {
        schema: frame,
        "x-stream-framing": declared,
        "x-stream-error-event": folded.jsonPath,
      },
    };
  }
  const other: StreamFraming = declared === "sse" ? "ndjson" : "sse";
  const entry = (framing: StreamFraming) => ({
    schema: frame,
    "x-stream-framing": framing,
    "x-stream-error-schema": errorFrames[framing],
  });
  return { [streamMediaTypes[declared]]: entry(declared), [streamMediaTypes[other]]: entry(other) };
}

/** The framing rules of a streamed operation, for its description. */
export function streamDescription(declared: StreamFraming, message: string): string {
  const sse =
    `- \`text/event-stream\` (server-sent events): each ${message} is one event with no \`event:\` name and one ` +
    "`data:` line holding the message's JSON, ended by a blank line. Lines starting with `:` are keep-alive " +
    "comments sent while the stream is idle. A failure after the stream started sends one last event, " +
    "`event: error`, whose data is the error body (`platform.Error`).";
  const ndjson =
    `- \`application/x-ndjson\` (newline-delimited JSON): each ${message} is one line of JSON ended by \`\\n\`. ` +
    'A failure after the stream started sends one last line, `{"error": <platform.Error>}`.';
  const lines = declared === "sse" ? [sse, ndjson] : [ndjson, sse];
  return [
    `Streams ${message} messages, one per frame, in the framing the route declares (the first below) or in the ` +
      "other one when the request's `Accept` names only that one:",
    ...lines,
    "The stream ends when the server closes the response after the last frame; a failure before the first frame " +
      "is an ordinary error response.",
  ].join("\n");
}

/** The framing rules of a streamed operation that folds its failures into a last message. */
export function foldedStreamDescription(declared: StreamFraming, message: string, folded: FoldedStreamEnd): string {
  const frames =
    declared === "sse"
      ? `Streams ${message} messages as \`text/event-stream\` (server-sent events): each ${message} is one event ` +
        "with no `event:` name and one `data:` line holding the message's JSON, ended by a blank line. Lines " +
        "starting with `:` are keep-alive comments sent while the stream is idle."
      : `Streams ${message} messages as \`application/x-ndjson\` (newline-delimited JSON): each ${message} is one ` +
        "line of JSON ended by `\\n`, with no envelope.";
  const other =
    declared === "sse" ? "NDJSON (`application/x-ndjson`) is" : "Server-sent events (`text/event-stream`) are";
  return [
    frames,
    `The last frame is always one ${message}: a failure after the stream started arrives as one last ${message} ` +
      `whose \`${folded.member}\` member is set, with the error's message in \`${folded.jsonPath}\` (its other ` +
      "fields at their defaults), and the response still ends normally (status 200). A failure before the first frame " +
      "(a bad request, missing credentials, an unknown resource) is an ordinary error response with its own status.",
    `${other} not offered: a request whose \`Accept\` names only that ` +
      `media type still gets \`${streamMediaTypes[declared]}\`.`,
  ].join("\n");
}
