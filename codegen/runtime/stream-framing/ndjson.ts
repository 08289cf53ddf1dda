import type { JsonValue } from "@bufbuild/protobuf";

/**
 * Newline-delimited JSON framing of a server stream: one message per line, and a final
 * `{"error": {...}}` line when the stream fails, so a stream always ends in a structured way. A
 * method with a stream error event never gets that line: its failure is folded into a last
 * message of its own type (server/stream-error-folding.ts).
 */
export const ndjsonMediaType = "application/x-ndjson";

export function ndjsonMessage(json: JsonValue): string {
  return `${JSON.stringify(json)}\n`;
}

export function ndjsonError(errorJson: JsonValue): string {
  return `${JSON.stringify({ error: errorJson })}\n`;
}

/**
 * Splits an NDJSON byte stream into parsed lines; blank lines are skipped. Each chunk is scanned
 * once (the search for a newline resumes where the last one stopped), so a line that arrives in
 * many chunks costs time linear in its length.
 */
export async function* parseNdjson(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<JsonValue> {
  const decoder = new TextDecoder();
  let buffer = "";
  let scanned = 0;
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    let end: number;
    while ((end = buffer.indexOf("\n", Math.max(start, scanned))) !== -1) {
      const line = buffer.slice(start, end).trim();
      start = end + 1;
      if (line !== "") yield JSON.parse(line) as JsonValue;
    }
    buffer = buffer.slice(start);
    scanned = buffer.length;
  }
  const rest = (buffer + decoder.decode()).trim();
  if (rest !== "") yield JSON.parse(rest) as JsonValue;
}
