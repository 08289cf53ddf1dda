import { Code, ConnectError } from "@connectrpc/connect";
import type { Dispatcher } from "undici";
import { IMAGE_MODALITIES, type Embedder } from "./embedder.js";
import type { EmbeddingsConfig } from "./embeddings-config.js";
import { createEndpointCaller } from "./endpoint-call.js";
import { LEXICAL_HASH_MODEL_ID, LexicalHashEmbedder } from "./lexical-hash-embedder.js";
import { RemoteEmbedder, type EndpointCall } from "./remote-embedder.js";
import { RerankClient, type Reranker } from "./rerank-client.js";

/**
 * Task prefixes of models trained with them. nomic-embed-text wants `search_document: ` before
 * stored text and `search_query: ` before queries; without them its retrieval quality drops.
 */
const TASK_PREFIXES: ReadonlyArray<{ match: RegExp; document: string; query: string }> = [
  { match: /nomic-embed-text/, document: "search_document: ", query: "search_query: " },
];

export interface EmbedderRegistryOptions {
  readonly config: EmbeddingsConfig;
  /** The operator's --allow-private-network (endpoints on loopback or a private network). */
  readonly allowPrivateNetwork?: boolean;
  /** Tests pass their own. */
  readonly fetch?: typeof fetch;
  readonly dispatcher?: Dispatcher;
  readonly timeoutMs?: number;
  readonly batchSize?: number;
}

/** What a template's (embed_model, dimensions) resolves to. */
export interface ResolvedEmbedder {
  /** The model actually used: the template's when an endpoint serves it, else the local one. */
  readonly modelId: string;
  readonly embedder: Embedder;
  /** True when the local lexical embedder stands in for the template's model. */
  readonly local: boolean;
}

/**
 * The one place that decides which embedder serves a model. A template names a model
 * (`nomic-embed-text-v1.5`); when the operator's endpoint serves it, that endpoint embeds, else the
 * local lexical embedder does, at the template's dimensions, under its own model id. Collections
 * record the resolved model id, so vectors of the local embedder are never compared with the real
 * model's after the operator configures an endpoint (the fan-out keeps them apart).
 */
export class EmbedderRegistry {
  readonly #config: EmbeddingsConfig;
  readonly #call: EndpointCall;
  readonly #batchSize: number | undefined;
  readonly #cache = new Map<string, Embedder>();

  constructor(options: EmbedderRegistryOptions) {
    this.#config = options.config;
    this.#batchSize = options.batchSize;
    this.#call = createEndpointCaller({
      apiKey: options.config.apiKey,
      allowPrivateNetwork: options.allowPrivateNetwork,
      fetch: options.fetch,
      dispatcher: options.dispatcher,
      timeoutMs: options.timeoutMs,
    });
  }

  /** The model id a template's embed model resolves to (what a new collection records). */
  resolveModelId(embedModel: string, modality = "text"): string {
    if (this.#config.baseUrl !== undefined && this.#config.models.has(embedModel)) return embedModel;
    if (IMAGE_MODALITIES.has(modality)) throw noImageModel(embedModel, modality);
    return LEXICAL_HASH_MODEL_ID;
  }

  /** The embedder for a template's (embed_model, dimensions) and modality. */
  resolve(embedModel: string, dimensions: number, modality = "text"): ResolvedEmbedder {
    const modelId = this.resolveModelId(embedModel, modality);
    return { modelId, embedder: this.forModel(modelId, dimensions), local: modelId === LEXICAL_HASH_MODEL_ID };
  }

  /**
   * The embedder for a model id a collection recorded. FAILED_PRECONDITION when no endpoint serves
   * it any more (the operator removed it): embedding with another model would give vectors that
   * silently do not match the stored ones.
   */
  forModel(modelId: string, dimensions: number): Embedder {
    const key = `${modelId}\u0000${dimensions}`;
    const cached = this.#cache.get(key);
    if (cached) return cached;
    let embedder: Embedder;
    if (modelId === LEXICAL_HASH_MODEL_ID) {
      embedder = new LexicalHashEmbedder(dimensions);
    } else {
      const endpointModel = this.#config.models.get(modelId);
      if (this.#config.baseUrl === undefined || endpointModel === undefined)
        throw new ConnectError(
          `no embeddings endpoint serves model "${modelId}": the operator sets --embeddings-url and lists the model in --embeddings-models`,
          Code.FailedPrecondition,
        );
      const prefixes = TASK_PREFIXES.find((entry) => entry.match.test(modelId));
      embedder = new RemoteEmbedder({
        baseUrl: this.#config.baseUrl,
        modelId,
        endpointModel,
        dimensions,
        call: this.#call,
        batchSize: this.#batchSize,
        prefixes,
      });
    }
    this.#cache.set(key, embedder);
    return embedder;
  }

  /** The cross-encoder of --rerank-url, or undefined when none is configured (rerank is then skipped with a warning). */
  reranker(): Reranker | undefined {
    return this.#config.rerankUrl === undefined ? undefined : new RerankClient(this.#config.rerankUrl, this.#call);
  }
}

function noImageModel(embedModel: string, modality: string): ConnectError {
  return new ConnectError(
    `${modality} embeddings need an embeddings endpoint serving "${embedModel}": there is no local ${modality} model; the operator sets --embeddings-url and lists the model in --embeddings-models`,
    Code.FailedPrecondition,
  );
}
