import { describe, expect, it } from "vitest";
import { ndjsonError, ndjsonMessage, parseNdjson } from "./ndjson.js";
import { parseSse, sseError, sseHeartbeat, sseMessage } from "./sse.js";

const bytes = (text: string) => new TextEncoder().encode(text);

/** Splits text into chunks of `size` bytes, to exercise parsing across chunk boundaries. */
async function* chunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const all = bytes(text);
  for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe("SSE framing", () => {
  const stream =
    sseMessage({ a: 1, s: "é\u2028" }) +
    sseHeartbeat +
    sseMessage([1, 2]) +
    sseError({ code: "internal", message: "boom" });

  it.each([1, 3, 7, 1000])("parses its own frames back in chunks of %i bytes", async (size) => {
    expect(await collect(parseSse(chunks(stream, size)))).toEqual([
      { event: "message", data: '{"a":1,"s":"é\u2028"}' },
      { event: "message", data: "[1,2]" },
      { event: "error", data: '{"code":"internal","message":"boom"}' },
    ]);
  });

  it.each([1, 2, 3])(
    "follows the WHATWG rules in chunks of %i bytes: CRLF and CR ends, multi-line data, comments",
    async (size) => {
      const text = "event: tick\r\ndata: a\r\ndata: b\r\n\r\n: comment\rdata:c\r\rdata: cut off";
      expect(await collect(parseSse(chunks(text, size)))).toEqual([
        { event: "tick", data: "a\nb" },
        { event: "message", data: "c" },
      ]);
    },
  );

  it("reads events of megabytes that arrive in many small chunks", async () => {
    const big = "é".repeat(1_500_000);
    const text = `data: ${big}\r\n\r\n` + sseMessage({ after: true }) + `data: ${big}\r`;
    const events = await collect(parseSse(chunks(text + "\r", 4093)));
    expect(events.map((e) => e.data.length)).toEqual([big.length, '{"after":true}'.length, big.length]);
    expect(events[0]!.data === big && events[2]!.data === big).toBe(true);
  });
});

describe("NDJSON framing", () => {
  it.each([1, 5, 1000])("parses its own lines back in chunks of %i bytes", async (size) => {
    const text =
      ndjsonMessage({ started: { runId: "r1" } }) +
      "\n" +
      ndjsonMessage({ completed: {} }) +
      ndjsonError({ code: "unavailable", message: "down" });
    expect(await collect(parseNdjson(chunks(text, size)))).toEqual([
      { started: { runId: "r1" } },
      { completed: {} },
      { error: { code: "unavailable", message: "down" } },
    ]);
  });

  it("reads a last line without a newline", async () => {
    expect(await collect(parseNdjson(chunks('{"a":1}\n{"b":2}', 4)))).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it("reads lines of megabytes that arrive in many small chunks", async () => {
    const big = "é€".repeat(700_000);
    const text = ndjsonMessage({ big }) + ndjsonMessage({ after: true }) + ndjsonMessage({ big });
    const lines = (await collect(parseNdjson(chunks(text, 4093)))) as { big?: string; after?: boolean }[];
    expect(lines.map((line) => Object.keys(line))).toEqual([["big"], ["after"], ["big"]]);
    expect(lines[0]!.big === big && lines[2]!.big === big).toBe(true);
  });
});
