import { describe, expect, it } from "vitest";
import { EmbedderRegistry } from "../../../embeddings/embedder-registry.js";
import { NO_EMBEDDINGS, readEmbeddingsConfig } from "../../../embeddings/embeddings-config.js";
import { LEXICAL_HASH_MODEL_ID, LexicalHashEmbedder } from "../../../embeddings/lexical-hash-embedder.js";
import { createEmbeddingsEmbedTool } from "./embeddings-embed-tool.js";
import { testContext, toolError } from "./test-kit.js";
import type { ToolErrorReason } from "./tool-error.js";
import type { JsonObject } from "./tool.js";

async function expectToolError(call: Promise<unknown>, reason: ToolErrorReason, text: string): Promise<void> {
  expect((await toolError(call, reason)).message).toContain(text);
}

const local = createEmbeddingsEmbedTool(new EmbedderRegistry({ config: NO_EMBEDDINGS }));
const call = (input: JsonObject) => local.invoke({ kind: "document", modality: "text", ...input }, testContext());

describe("embeddings.embed", () => {
  it("embeds with the local embedder when no endpoint serves the model, and says so", async () => {
    const result = (await call({
      model: "nomic-embed-text-v1.5",
      dimensions: 768,
      input: ["hello world", "shipping"],
    })) as {
      model: string;
      dimensions: number;
      embeddings: number[][];
    };
    expect(result.model).toBe(LEXICAL_HASH_MODEL_ID);
    expect(result.dimensions).toBe(768);
    expect(result.embeddings).toHaveLength(2);
    expect(result.embeddings[0]).toEqual(Array.from(new LexicalHashEmbedder(768).embedOne("hello world")));
  });

  it("refuses bad input as invalid_input, and image modalities without an endpoint as failed", async () => {
    await expectToolError(
      call({ model: "m", dimensions: 0, input: ["a"] }),
      "invalid_input",
      "dimensions must be from 1 to 2000",
    );
    await expectToolError(
      call({ model: "m", dimensions: 8, input: [] }),
      "invalid_input",
      "input must hold 1 to 2048 texts",
    );
    await expectToolError(
      call({ model: "m", dimensions: 8, input: [3] }),
      "invalid_input",
      "input[0] must be a string",
    );
    await expectToolError(
      call({ model: "m", dimensions: 8, input: ["a"], kind: "other" }),
      "invalid_input",
      'kind must be "document" or "query"',
    );
    await expectToolError(
      call({ model: "m", dimensions: 8, input: Array.from({ length: 21 }, () => "x".repeat(100_000)) }),
      "invalid_input",
      "input holds 2100000 characters in all, more than 2000000",
    );
    await expectToolError(
      call({ model: "clip", dimensions: 8, input: ["a"], modality: "visual" }),
      "failed",
      "there is no local visual model",
    );
  });

  it("reports an unreachable endpoint as unavailable, so the step's retry applies", async () => {
    // A loopback port nothing listens on (the guard is lifted for the test).
    const config = readEmbeddingsConfig({
      PLATFORM_EMBEDDINGS_URL: "http://127.0.0.1:9/v1",
      PLATFORM_EMBEDDINGS_MODELS: "m",
    });
    const tool = createEmbeddingsEmbedTool(
      new EmbedderRegistry({ config, allowPrivateNetwork: true, timeoutMs: 2_000 }),
    );
    await expectToolError(
      tool.invoke({ model: "m", dimensions: 4, input: ["a"], kind: "query", modality: "text" }, testContext()),
      "unavailable",
      "is unreachable",
    );
  });
});
