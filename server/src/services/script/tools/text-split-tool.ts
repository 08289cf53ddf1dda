import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import { describe } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool } from "./tool.js";
import { DEFAULT_SEPARATORS, splitText } from "./text-splitter.js";

const DEFAULT_OVERLAP = 100;

/** `text.split`: the recursive character splitter of text-splitter.ts as a tool. */
export function createTextSplitTool(): Tool {
  return {
    name: "text.split",
    version: NATIVE_TOOL_VERSION,
    description:
      "Splits text into chunks of at most chunkSize characters, cutting at paragraphs, then lines, sentences, words and " +
      "finally anywhere, with up to chunkOverlap characters repeated between consecutive chunks. Each chunk is the exact " +
      "slice text[start:end] (UTF-16 code units), so the chunks cover the whole text.",
    inputs: [
      { name: "text", type: "string", required: true, description: "the text to split" },
      {
        name: "chunkSize",
        type: "integer",
        required: false,
        defaultValue: 1000,
        description: "largest chunk, in characters (at least 1)",
      },
      {
        name: "chunkOverlap",
        type: "integer",
        required: false,
        defaultValue: DEFAULT_OVERLAP,
        description: "characters consecutive chunks may share (0 to chunkSize - 1)",
      },
      {
        name: "separators",
        type: "array",
        required: false,
        defaultValue: [...DEFAULT_SEPARATORS],
        description: 'strings to cut at, tried in order ("" cuts anywhere and is implied at the end)',
      },
      {
        name: "batchSize",
        type: "integer",
        required: false,
        defaultValue: 0,
        description: "chunks per batch in `batches` (0 for no batches)",
      },
    ],
    outputs: [
      {
        name: "chunks",
        type: "array",
        required: true,
        description: "objects {index, text, start, end}, in text order",
      },
      {
        name: "batches",
        type: "array",
        required: false,
        description:
          "with batchSize: objects {first, chunks}, the chunks in runs of batchSize, first the index of the first",
      },
    ],
    runtime: nativeRuntime("textSplit", 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input): Promise<JsonObject> {
      const chunkSize = input.chunkSize as number;
      const chunkOverlap = input.chunkOverlap as number;
      if (chunkSize < 1) throw invalidInput(`text.split: chunkSize must be at least 1, got ${chunkSize}`);
      if (chunkOverlap < 0 || chunkOverlap >= chunkSize) {
        // The default overlap (100) does not fit a chunkSize of 100 or less: say so, since the
        // caller may not have set chunkOverlap at all.
        throw invalidInput(
          `text.split: chunkOverlap must be from 0 to chunkSize - 1 (${chunkSize - 1}), got ${chunkOverlap} (its default is ${DEFAULT_OVERLAP})`,
        );
      }
      const batchSize = input.batchSize as number;
      if (batchSize < 0) throw invalidInput(`text.split: batchSize must be 0 or more, got ${batchSize}`);
      const separators = stringList(input.separators as JsonValue[]);
      const chunks = splitText(String(input.text), { chunkSize, chunkOverlap, separators }).map((chunk) => ({
        ...chunk,
      }));
      if (batchSize === 0) return { chunks };
      // Slicing here keeps a script's batching linear: a CEL expression can only filter the whole
      // list once per batch.
      const batches = [];
      for (let first = 0; first < chunks.length; first += batchSize)
        batches.push({ first, chunks: chunks.slice(first, first + batchSize) });
      return { chunks, batches };
    },
  };
}

function stringList(values: readonly JsonValue[]): string[] {
  return values.map((value, index) => {
    if (typeof value !== "string")
      throw invalidInput(`text.split: separators[${index}] must be a string, got ${describe(value)}`);
    return value;
  });
}
