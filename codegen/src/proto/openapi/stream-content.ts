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
 * The content of a streamed response. A stream is no single JSON document, and OpenAPI 3.1 has no
 * keyword for the schema of one frame (3.2's `itemSchema` is not read by today's linters), so the
 * `schema` is that of one message frame and `x-stream-framing` says how frames follow each other;
 * `x-stream-error-schema` is the schema of the final error frame. Both framings are listed: the
 * declared one first, and the other one, which a client gets by asking for it in `Accept`.
 */
export function streamContent(declared: StreamFraming, frame: SchemaObject | ReferenceObject): ContentObject {
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
