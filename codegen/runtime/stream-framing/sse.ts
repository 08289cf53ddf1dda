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
 * (a CR at a chunk's end waits for a possible LF), and an event cut off by the end of the stream
 * is not dispatched.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  function* takeLine(line: string): Generator<SseEvent> {
    if (line === "") {
      if (data.length > 0) yield { event: event === "" ? "message" : event, data: data.join("\n") };
      event = "";
      data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  function* takeLines(final: boolean): Generator<SseEvent> {
    for (;;) {
      const end = buffer.search(/[\r\n]/);
      if (end === -1) return;
      if (buffer[end] === "\r" && end === buffer.length - 1 && !final) return;
      const width = buffer[end] === "\r" && buffer[end + 1] === "\n" ? 2 : 1;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + width);
      yield* takeLine(line);
    }
  }
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* takeLines(false);
  }
  buffer += decoder.decode();
  yield* takeLines(true);
}
