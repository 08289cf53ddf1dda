import type { JsonValue } from "@bufbuild/protobuf";

/**
 * Server-sent events framing of a server stream: one `data:` event per message, and a final
 * `event: error` whose data is the error envelope when the stream fails, so a stream always ends
 * in a structured way. JSON never contains a raw newline, so one `data:` line per event suffices.
 */
export const sseMediaType = "text/event-stream";

export function sseMessage(json: JsonValue): string {
  return `data: ${JSON.stringify(json)}\n\n`;
}

export function sseError(errorJson: JsonValue): string {
  return `event: error\ndata: ${JSON.stringify(errorJson)}\n\n`;
}

/** A comment line: keeps idle connections (and the proxies between) from timing out. */
export const sseHeartbeat = ": keep-alive\n\n";

/** One parsed event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/**
 * Parses an SSE byte stream into events (for clients that read a stream through `fetch`, where
 * the browser's EventSource cannot send an Authorization header). Follows the WHATWG rules:
 * `event` and `data` fields (data lines joined by newlines), comments, CRLF, LF or CR line ends
 * (an LF right after a CR, even in the next chunk, belongs to the same line end), and an event cut
 * off by the end of the stream is not dispatched. Each chunk is scanned once, so an event of many
 * megabytes arriving in small chunks costs time in proportion to its size. Not `eventsource-parser`:
 * its releases for Node 20 (3.x) lose events whose CR line ends fall on a chunk boundary.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const lineEnd = /[\r\n]/g;
  // The pieces of the line whose end has not arrived yet.
  let line: string[] = [];
  let afterCr = false;
  let event = "";
  let data: string[] = [];
  function* takeLine(text: string): Generator<SseEvent> {
    if (text === "") {
      if (data.length > 0) yield { event: event === "" ? "message" : event, data: data.join("\n") };
      event = "";
      data = [];
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    const value = colon === -1 ? "" : text.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  function* take(text: string): Generator<SseEvent> {
    if (text === "") return;
    let start = afterCr && text.startsWith("\n") ? 1 : 0;
    afterCr = false;
    for (;;) {
      lineEnd.lastIndex = start;
      const found = lineEnd.exec(text);
      if (!found) {
        if (start < text.length) line.push(text.slice(start));
        return;
      }
      line.push(text.slice(start, found.index));
      const complete = line.join("");
      line = [];
      yield* takeLine(complete);
      start = found.index + 1;
      if (found[0] === "\r") {
        if (start === text.length) afterCr = true;
        else if (text[start] === "\n") start++;
      }
    }
  }
  for await (const chunk of chunks) yield* take(decoder.decode(chunk, { stream: true }));
  yield* take(decoder.decode());
}
