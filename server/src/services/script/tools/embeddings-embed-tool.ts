import { Code, ConnectError } from "@connectrpc/connect";
import type { EmbedderRegistry } from "../../../embeddings/embedder-registry.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput, ToolError } from "./tool-error.js";
import { describe } from "./tool-input.js";
import type { JsonValue, Tool } from "./tool.js";

/** Texts one call embeds: a template batches above this (OpenAI's own limit is 2048). */
export const MAX_EMBED_INPUTS = 2048;
/** Characters of one text; far beyond any embedding model's context, so only abuse hits it. */
export const MAX_EMBED_TEXT_CHARS = 100_000;
/** Characters of one call in all: bounds the work one step hands an embedder. */
export const MAX_EMBED_TOTAL_CHARS = 2_000_000;
/** Bytes a vector component takes in the step output, as JSON, counted against the thread's memory. */
const BYTES_PER_COMPONENT = 12;

/**
 * `embeddings.embed`: embeds texts with the platform's embedders (server/src/embeddings), so a
 * template names a model and never an endpoint, URL or key. The model the operator's endpoint
 * serves is used when it serves the template's model; otherwise the local lexical embedder, at the
 * same dimensions, and `model` in the output says so. Image modalities have no local model and
 * fail until the operator configures one.
 */
export function createEmbeddingsEmbedTool(embedders: EmbedderRegistry): Tool {
  return {
    name: "embeddings.embed",
    version: NATIVE_TOOL_VERSION,
    description:
      "Embeds texts with the embedding model a template names: the operator's endpoint when it serves that model, else " +
      "the platform's local lexical embedder (platform-lexical-hash-v1) at the same dimensions. `model` in the output is the model actually used.",
    inputs: [
      {
        name: "model",
        type: "string",
        required: true,
        description: "the template's embed model, such as nomic-embed-text-v1.5",
      },
      { name: "dimensions", type: "integer", required: true, description: "length of every vector (1 to 2000)" },
      { name: "input", type: "array", required: true, description: `the texts, 1 to ${MAX_EMBED_INPUTS} strings` },
      {
        name: "kind",
        type: "string",
        required: false,
        defaultValue: "document",
        description: '"document" for stored text, "query" for search text (models with task prefixes add them)',
      },
      {
        name: "modality",
        type: "string",
        required: false,
        defaultValue: "text",
        description: "text, code, visual, object or face; image modalities need an endpoint",
      },
    ],
    outputs: [
      { name: "model", type: "string", required: true, description: "the model that embedded the texts" },
      { name: "dimensions", type: "integer", required: true, description: "length of every vector" },
      {
        name: "embeddings",
        type: "array",
        required: true,
        description: "one array of numbers per input text, in order",
      },
    ],
    runtime: nativeRuntime("embeddingsEmbed", 5 * 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input, context) {
      const model = input.model as string;
      const dimensions = input.dimensions as number;
      const kind = input.kind;
      const texts = input.input as JsonValue[];
      if (model.trim() === "") throw invalidInput("embeddings.embed: model must not be empty");
      if (dimensions < 1 || dimensions > 2000)
        throw invalidInput(`embeddings.embed: dimensions must be from 1 to 2000, got ${dimensions}`);
      if (kind !== "document" && kind !== "query")
        throw invalidInput(`embeddings.embed: kind must be "document" or "query", got ${describe(kind ?? null)}`);
      if (texts.length === 0 || texts.length > MAX_EMBED_INPUTS)
        throw invalidInput(`embeddings.embed: input must hold 1 to ${MAX_EMBED_INPUTS} texts, got ${texts.length}`);
      texts.forEach((text, index) => {
        if (typeof text !== "string")
          throw invalidInput(`embeddings.embed: input[${index}] must be a string, got ${describe(text)}`);
        if (text.length > MAX_EMBED_TEXT_CHARS)
          throw invalidInput(`embeddings.embed: input[${index}] is longer than ${MAX_EMBED_TEXT_CHARS} characters`);
      });
      const total = (texts as string[]).reduce((sum, text) => sum + text.length, 0);
      if (total > MAX_EMBED_TOTAL_CHARS)
        throw invalidInput(
          `embeddings.embed: input holds ${total} characters in all, more than ${MAX_EMBED_TOTAL_CHARS}`,
        );
      context.memory?.reserve(texts.length * dimensions * BYTES_PER_COMPONENT);
      try {
        const { modelId, embedder } = embedders.resolve(model, dimensions, input.modality as string);
        const vectors = await embedder.embed(texts as string[], kind, context.signal);
        return {
          model: modelId,
          dimensions,
          embeddings: vectors.map((vector) => Array.from(vector)),
          embeddedAt: new Date().toISOString(),
        };
      } catch (error) {
        if (context.signal.aborted) throw context.signal.reason;
        throw toolErrorOf(error);
      }
    },
  };
}

/** The embedders' ConnectErrors as tool failures a step's retry policy understands. */
function toolErrorOf(error: unknown): ToolError {
  if (!(error instanceof ConnectError))
    return new ToolError("failed", `embeddings.embed: ${String(error)}`, { cause: error });
  const message = `embeddings.embed: ${error.rawMessage}`;
  if (error.code === Code.InvalidArgument) return new ToolError("invalid_input", message, { cause: error });
  if (error.code === Code.Unavailable) return new ToolError("unavailable", message, { cause: error });
  return new ToolError("failed", message, { cause: error });
}
