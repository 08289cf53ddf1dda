import { Code, ConnectError } from "@connectrpc/connect";
import type { EmbedKind, Embedder } from "./embedder.js";

/** Posts a JSON body to an endpoint and answers the parsed JSON (endpoint-call.ts). */
export type EndpointCall = (url: string, body: unknown, what: string, signal?: AbortSignal) => Promise<unknown>;

export interface RemoteEmbedderOptions {
  /** API root; `/embeddings` is added. */
  readonly baseUrl: string;
  /** The template's model id (what collections record). */
  readonly modelId: string;
  /** The name the endpoint serves the model under. */
  readonly endpointModel: string;
  readonly dimensions: number;
  readonly call: EndpointCall;
  /** Texts per request, default 64 (TEI's default max client batch is 32..512; OpenAI takes 2048). */
  readonly batchSize?: number;
  /** Task prefixes the model was trained with (nomic's `search_document: `), added before each text. */
  readonly prefixes?: { readonly document: string; readonly query: string } | undefined;
}

/**
 * An embedder behind an OpenAI-compatible `POST /embeddings` (OpenAI, vLLM, TEI, Ollama's /v1,
 * LiteLLM). It also reads the two other answer shapes such servers give, Ollama's native
 * `{embeddings: [[...]]}` and TEI's native `[[...]]`, so a root pointing at either still works.
 * Batches go one after another: the endpoint, not this client, decides how much runs in parallel.
 */
export class RemoteEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  readonly #options: RemoteEmbedderOptions;

  constructor(options: RemoteEmbedderOptions) {
    this.modelId = options.modelId;
    this.dimensions = options.dimensions;
    this.#options = options;
  }

  async embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    const { baseUrl, endpointModel, call, prefixes } = this.#options;
    const batchSize = this.#options.batchSize ?? 64;
    const prefix = prefixes ? prefixes[kind] : "";
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize).map((text) => prefix + text);
      const answer = await call(
        `${baseUrl}/embeddings`,
        { model: endpointModel, input: batch, encoding_format: "float" },
        "embeddings",
        signal,
      );
      vectors.push(...this.#vectorsOf(answer, batch.length));
    }
    return vectors;
  }

  #vectorsOf(answer: unknown, expected: number): Float32Array[] {
    const lists = embeddingLists(answer);
    if (lists === undefined)
      throw new ConnectError(
        "the embeddings endpoint answered JSON without embeddings (expected {data: [{index, embedding}]})",
        Code.Unavailable,
      );
    if (lists.length !== expected)
      throw new ConnectError(
        `the embeddings endpoint returned ${lists.length} embeddings for ${expected} texts`,
        Code.Unavailable,
      );
    return lists.map((list) => {
      if (list.length !== this.dimensions)
        throw new ConnectError(
          `the embeddings endpoint returned vectors of ${list.length} dimensions for ${this.modelId}, not ${this.dimensions}: does it serve that model as "${this.#options.endpointModel}"?`,
          Code.FailedPrecondition,
        );
      return Float32Array.from(list);
    });
  }
}

/** The vectors of an answer in input order, or undefined when the shape is none of the known ones. */
function embeddingLists(answer: unknown): number[][] | undefined {
  if (Array.isArray(answer)) return answer.every(isNumberList) ? answer : undefined;
  if (typeof answer !== "object" || answer === null) return undefined;
  if ("data" in answer && Array.isArray(answer.data)) {
    const rows: unknown[] = answer.data;
    const ordered: number[][] = new Array<number[]>(rows.length);
    for (const [position, row] of rows.entries()) {
      if (typeof row !== "object" || row === null || !("embedding" in row) || !isNumberList(row.embedding))
        return undefined;
      // OpenAI gives `index`; some servers omit it and keep input order.
      const index = "index" in row && typeof row.index === "number" ? row.index : position;
      if (!Number.isInteger(index) || index < 0 || index >= rows.length || ordered[index] !== undefined)
        return undefined;
      ordered[index] = row.embedding;
    }
    return ordered;
  }
  if ("embeddings" in answer && Array.isArray(answer.embeddings))
    return answer.embeddings.every(isNumberList) ? (answer.embeddings as number[][]) : undefined;
  return undefined;
}

function isNumberList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((item) => typeof item === "number" && Number.isFinite(item));
}
