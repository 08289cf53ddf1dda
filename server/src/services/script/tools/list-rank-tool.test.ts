import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const rank = (input: JsonObject) => registry.invoke("org", "list.rank", input, testContext());

describe("list.rank", () => {
  const hits = [
    { key: "a.md", score: 0.5, content: "a1" },
    { key: "b.md", score: 0.9, content: "b1" },
    { key: "self.md", score: 1, content: "s" },
    { key: "a.md", score: 0.8, content: "a2" },
    { key: "c.md", score: 0.8, content: "c1" },
    { key: "b.md", score: 0.1, content: "b2" },
  ];

  it("keeps the best item per key, highest first, ties in order of appearance, without the excluded keys", async () => {
    expect(await rank({ items: hits, key: "key", score: "score", exclude: ["self.md"] })).toEqual({
      groups: [
        { key: "b.md", score: 0.9, count: 2, best: hits[1] },
        { key: "a.md", score: 0.8, count: 2, best: hits[3] },
        { key: "c.md", score: 0.8, count: 1, best: hits[4] },
      ],
    });
  });

  it("stops at the limit", async () => {
    const { groups } = (await rank({ items: hits, key: "key", score: "score", limit: 2 })) as { groups: JsonObject[] };
    expect(groups.map((group) => group.key)).toEqual(["self.md", "b.md"]);
  });

  it.each([
    [{ items: [1], key: "key", score: "score" }, "items[0] must be an object, got number 1"],
    [{ items: [{ score: 1 }], key: "key", score: "score" }, 'items[0] has no "key"'],
    [
      { items: [{ key: "a", score: "high" }], key: "key", score: "score" },
      'items[0].score must be a number, got the string "high"',
    ],
    [{ items: [], key: "key", score: "score", limit: 0 }, "limit must be from 1 to 1000, got 0"],
  ])("refuses %j", async (input, message) => {
    expect((await toolError(rank(input), "invalid_input")).message).toContain(`list.rank: ${message}`);
  });
});
