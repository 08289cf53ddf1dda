import { describe, expect, it } from "vitest";
import { readEmbeddingsConfig } from "./embeddings-config.js";

describe("embeddings config", () => {
  it("is empty when nothing is set", () => {
    const config = readEmbeddingsConfig({});
    expect(config.baseUrl).toBeUndefined();
    expect(config.models.size).toBe(0);
    expect(config.rerankUrl).toBeUndefined();
  });

  it("maps template models to endpoint names", () => {
    const config = readEmbeddingsConfig({
      PLATFORM_EMBEDDINGS_URL: "http://127.0.0.1:11434/v1/",
      PLATFORM_EMBEDDINGS_MODELS: "nomic-embed-text-v1.5=nomic-embed-text, bge-m3",
      PLATFORM_EMBEDDINGS_API_KEY: " key ",
      PLATFORM_RERANK_URL: "http://127.0.0.1:8080",
    });
    expect(config.baseUrl).toBe("http://127.0.0.1:11434/v1");
    expect([...config.models]).toEqual([
      ["nomic-embed-text-v1.5", "nomic-embed-text"],
      ["bge-m3", "bge-m3"],
    ]);
    expect(config.apiKey).toBe("key");
    expect(config.rerankUrl).toBe("http://127.0.0.1:8080");
  });

  it("refuses half or malformed settings by name", () => {
    expect(() => readEmbeddingsConfig({ PLATFORM_EMBEDDINGS_URL: "http://127.0.0.1/v1" })).toThrow(
      "PLATFORM_EMBEDDINGS_MODELS is required",
    );
    expect(() => readEmbeddingsConfig({ PLATFORM_EMBEDDINGS_MODELS: "a" })).toThrow("PLATFORM_EMBEDDINGS_URL is not");
    expect(() => readEmbeddingsConfig({ PLATFORM_EMBEDDINGS_URL: "ftp://x", PLATFORM_EMBEDDINGS_MODELS: "a" })).toThrow(
      "must use http or https",
    );
    expect(() =>
      readEmbeddingsConfig({ PLATFORM_EMBEDDINGS_URL: "http://127.0.0.1", PLATFORM_EMBEDDINGS_MODELS: "a=b=c" }),
    ).toThrow('"a=b=c" is not');
    expect(() => readEmbeddingsConfig({ PLATFORM_RERANK_URL: "not a url" })).toThrow("PLATFORM_RERANK_URL must be");
  });
});
