import { describe, expect, it } from "vitest";
import { chooseCompatibleGroup, fanOutSearch, type FanOutCollection } from "./collection-fan-out.js";
import { highlightSnippet } from "./highlight.js";

const collections: FanOutCollection[] = [
  { name: "docs", dimensions: 768, embeddingType: "float", embedModel: "nomic-embed-text-v1.5" },
  { name: "code", dimensions: 1024, embeddingType: "float", embedModel: "code-model" },
  { name: "notes", dimensions: 768, embeddingType: "float", embedModel: "nomic-embed-text-v1.5" },
  { name: "local", dimensions: 768, embeddingType: "float", embedModel: "platform-lexical-hash-v1" },
  { name: "int8", dimensions: 768, embeddingType: "int8", embedModel: "nomic-embed-text-v1.5" },
];

describe("multi-collection fan-out", () => {
  it("groups by dimensions, embedding type and model, led by the first collection that fits the query", () => {
    const text = chooseCompatibleGroup(collections, { kind: "text" });
    expect(text.chosen.map((c) => c.name)).toEqual(["docs", "notes"]);
    expect(Object.fromEntries(text.skipped.map((s) => [s.collection, s.failReason]))).toEqual({
      code: "incompatible with the searched collections: dimensions 1024 (searched: 768), embed model code-model (searched: nomic-embed-text-v1.5)",
      local:
        "incompatible with the searched collections: embed model platform-lexical-hash-v1 (searched: nomic-embed-text-v1.5)",
      int8: "incompatible with the searched collections: embedding type int8 (searched: float)",
    });
    expect(chooseCompatibleGroup(collections, { kind: "vector", dimensions: 1024 }).chosen.map((c) => c.name)).toEqual([
      "code",
    ]);
    const none = chooseCompatibleGroup(collections, { kind: "vector", dimensions: 3 });
    expect(none.chosen).toEqual([]);
    expect(none.skipped[0]?.failReason).toBe("incompatible dimensions: the query vector has 3, the collection 768");
  });

  it("merges hits by score, cuts to topK and reports every collection, a failure as a failReason", async () => {
    const byName: Record<string, number[]> = { docs: [0.9, 0.5], notes: [0.8, 0.7] };
    const result = await fanOutSearch(
      [
        ...collections,
        { name: "broken", dimensions: 768, embeddingType: "float", embedModel: "nomic-embed-text-v1.5" },
      ],
      { kind: "text" },
      3,
      (c) =>
        c.name === "broken"
          ? Promise.reject(new Error("boom"))
          : Promise.resolve((byName[c.name] ?? []).map((score) => ({ score }))),
      (error) => `search failed: ${(error as Error).message}`,
    );
    expect(result.hits).toEqual([
      { score: 0.9, collection: "docs" },
      { score: 0.8, collection: "notes" },
      { score: 0.7, collection: "notes" },
    ]);
    expect(result.statuses.map((s) => [s.collection, s.searchCompleted, s.failReason !== ""])).toEqual([
      ["docs", true, false],
      ["code", false, true],
      ["notes", true, false],
      ["local", false, true],
      ["int8", false, true],
      ["broken", false, true],
    ]);
    expect(result.statuses.at(-1)?.failReason).toBe("search failed: boom");
  });
});

describe("highlights", () => {
  it("marks the densest run of query terms and cuts long text", () => {
    const text = `${"filler ".repeat(40)}Orders ship within two business days. ${"more ".repeat(40)}`;
    const snippet = highlightSnippet(text, ["ship", "days"], 80);
    expect(snippet).toContain("<em>ship</em> within two business <em>days</em>");
    expect(snippet.startsWith("…") && snippet.endsWith("…")).toBe(true);
    expect(highlightSnippet("No match here", ["zzz"])).toBe("No match here");
    expect(highlightSnippet("Ünïcode WORDS", ["words"])).toBe("Ünïcode <em>WORDS</em>");
  });
});
