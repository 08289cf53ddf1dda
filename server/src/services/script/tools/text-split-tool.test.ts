import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const split = (input: JsonObject) => registry.invoke("org", "text.split", input, testContext());

describe("text.split", () => {
  it("splits with the defaults (1000 / 100, paragraph to character)", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"word ".repeat(20)}`).join("\n\n");
    const { chunks } = (await split({ text })) as {
      chunks: { index: number; text: string; start: number; end: number }[];
    };
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => chunk.text.length <= 1000)).toBe(true);
    expect(chunks[0]).toMatchObject({ index: 0, start: 0 });
    expect(chunks.at(-1)?.end).toBe(text.length);
  });

  it("takes its own sizes and separators", async () => {
    expect(await split({ text: "a|b|c|d", chunkSize: 4, chunkOverlap: 0, separators: ["|"] })).toEqual({
      chunks: [
        { index: 0, text: "a|b|", start: 0, end: 4 },
        { index: 1, text: "c|d", start: 4, end: 7 },
      ],
    });
  });

  it("gives the chunks in batches too, with batchSize", async () => {
    const { chunks, batches } = (await split({
      text: "a|b|c|d|e",
      chunkSize: 2,
      chunkOverlap: 0,
      separators: ["|"],
      batchSize: 2,
    })) as {
      chunks: JsonObject[];
      batches: { first: number; chunks: JsonObject[] }[];
    };
    expect(chunks).toHaveLength(5);
    expect(batches).toEqual([
      { first: 0, chunks: chunks.slice(0, 2) },
      { first: 2, chunks: chunks.slice(2, 4) },
      { first: 4, chunks: chunks.slice(4) },
    ]);
    expect(await split({ text: "a", batchSize: 0 })).not.toHaveProperty("batches");
  });

  it.each([
    [{ text: "x", batchSize: -1 }, "batchSize must be 0 or more, got -1"],
    [{ text: "x", chunkSize: 0 }, "chunkSize must be at least 1, got 0"],
    [{ text: "x", chunkSize: 10, chunkOverlap: 10 }, "chunkOverlap must be from 0 to chunkSize - 1 (9), got 10"],
    [{ text: "x", chunkSize: 50 }, "chunkOverlap must be from 0 to chunkSize - 1 (49), got 100 (its default is 100)"],
    [{ text: "x", chunkOverlap: -1 }, "chunkOverlap must be from 0 to chunkSize - 1 (999), got -1"],
    [{ text: "x", separators: ["\n", 3] }, "separators[1] must be a string, got number 3"],
  ])("refuses %j", async (input, message) => {
    expect((await toolError(split(input), "invalid_input")).message).toContain(message);
  });
});
