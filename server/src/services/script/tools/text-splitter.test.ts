import { describe, expect, it } from "vitest";
import { DEFAULT_SEPARATORS, splitText } from "./text-splitter.js";
import type { TextChunk } from "./text-splitter.js";

/** A small seeded generator (mulberry32), so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PARTS = [
  "lorem",
  "ipsum",
  "a",
  "dolor",
  " ",
  " ",
  " ",
  ". ",
  ", ",
  "\n",
  "\n\n",
  "🙂",
  "é",
  "supercalifragilisticexpialidocious",
  "x".repeat(70),
];

function randomText(next: () => number): string {
  const length = Math.floor(next() * 400);
  let text = "";
  for (let i = 0; i < length; i++) text += PARTS[Math.floor(next() * PARTS.length)];
  return text;
}

/** The first rule `chunks` breaks, or undefined. Plain checks: 400 texts make expect() slow. */
function violation(
  text: string,
  chunks: readonly TextChunk[],
  chunkSize: number,
  chunkOverlap: number,
): string | undefined {
  if (text === "") return chunks.length === 0 ? undefined : "chunks of an empty text";
  if (chunks[0]?.start !== 0) return "the first chunk does not start at 0";
  if (chunks.at(-1)?.end !== text.length) return "the last chunk does not end at the end of the text";
  for (const [index, chunk] of chunks.entries()) {
    const at = `chunk ${index}`;
    if (chunk.index !== index) return `${at} has index ${chunk.index}`;
    if (chunk.text !== text.slice(chunk.start, chunk.end)) return `${at} is not text.slice(start, end)`;
    if (chunk.end <= chunk.start) return `${at} is empty`;
    if (chunk.text.length > chunkSize) return `${at} is ${chunk.text.length} long`;
    if (chunkSize > 1 && (/^[\uDC00-\uDFFF]/.test(chunk.text) || /[\uD800-\uDBFF]$/.test(chunk.text)))
      return `${at} cuts a surrogate pair`;
    const previous = chunks[index - 1];
    if (previous === undefined) continue;
    if (chunk.start <= previous.start) return `${at} does not start after the previous one`;
    if (chunk.start > previous.end) return `${at} leaves a gap after the previous one`;
    if (previous.end - chunk.start > chunkOverlap)
      return `${at} overlaps the previous one by ${previous.end - chunk.start}`;
  }
  return undefined;
}

describe("splitText properties", () => {
  it("holds the size, overlap and coverage rules on 400 random texts", () => {
    const next = random(20261125);
    let checked = 0;
    for (let run = 0; run < 400; run++) {
      const text = randomText(next);
      const chunkSize = 1 + Math.floor(next() * 300);
      const chunkOverlap = Math.floor(next() * chunkSize);
      const separators = next() < 0.2 ? ["\n", "lorem"] : DEFAULT_SEPARATORS;
      const chunks = splitText(text, { chunkSize, chunkOverlap, separators });
      const broken = violation(text, chunks, chunkSize, chunkOverlap);
      if (broken !== undefined)
        expect.fail(
          `run ${run}: ${broken} (chunkSize ${chunkSize}, chunkOverlap ${chunkOverlap}, text ${JSON.stringify(text)})`,
        );
      checked += chunks.length;
    }
    expect(checked).toBeGreaterThan(4000); // the runs did split, not only pass trivially
  });

  it("never splits a surrogate pair and still fits chunkSize 1", () => {
    const text = "🙂a🙂🙂b";
    expect(violation(text, splitText(text, { chunkSize: 2, chunkOverlap: 0, separators: [] }), 2, 0)).toBeUndefined();
    const ones = splitText(text, { chunkSize: 1, chunkOverlap: 0, separators: DEFAULT_SEPARATORS });
    expect(ones.every((chunk) => chunk.text.length === 1)).toBe(true);
    expect(ones.map((chunk) => chunk.text).join("")).toBe(text);
  });
});

describe("splitText examples", () => {
  it("keeps a text that fits as one chunk", () => {
    expect(splitText("short text", { chunkSize: 100, chunkOverlap: 10, separators: DEFAULT_SEPARATORS })).toEqual([
      { index: 0, text: "short text", start: 0, end: 10 },
    ]);
  });

  it("cuts at paragraphs first, keeping each separator at the end of its piece", () => {
    const text = "First paragraph here.\n\nSecond one.\n\nThird paragraph, longer.";
    const chunks = splitText(text, { chunkSize: 40, chunkOverlap: 0, separators: DEFAULT_SEPARATORS });
    expect(chunks.map((chunk) => chunk.text)).toEqual([
      "First paragraph here.\n\nSecond one.\n\n",
      "Third paragraph, longer.",
    ]);
  });

  it("falls back to words inside a long paragraph and repeats whole words as overlap", () => {
    const text = "one two three four five six seven eight nine ten";
    const chunks = splitText(text, { chunkSize: 15, chunkOverlap: 6, separators: DEFAULT_SEPARATORS });
    expect(chunks.map((chunk) => chunk.text)).toEqual([
      "one two three ",
      "three four ",
      "four five six ",
      "six seven ",
      "seven eight ",
      "eight nine ten",
    ]);
  });

  it("cuts a word longer than the chunk size by characters", () => {
    const chunks = splitText("abcdefghij", { chunkSize: 4, chunkOverlap: 1, separators: DEFAULT_SEPARATORS });
    expect(chunks.map((chunk) => chunk.text)).toEqual(["abcd", "defg", "ghij"]);
  });

  it("returns no chunk for empty text", () => {
    expect(splitText("", { chunkSize: 10, chunkOverlap: 0, separators: DEFAULT_SEPARATORS })).toEqual([]);
  });

  it("refuses an overlap that is not below the size", () => {
    expect(() => splitText("x", { chunkSize: 10, chunkOverlap: 10, separators: [] })).toThrow(
      /chunkOverlap must be a whole number from 0 to chunkSize - 1 \(9\)/,
    );
    expect(() => splitText("x", { chunkSize: 0, chunkOverlap: 0, separators: [] })).toThrow(
      /chunkSize must be a whole number of at least 1/,
    );
  });
});
