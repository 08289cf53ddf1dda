/** Whether a text is stored (a document chunk) or searched with (a query); asymmetric models prefix them differently. */
export type EmbedKind = "document" | "query";

/**
 * Turns texts into vectors. One instance serves one model at one length; the script service's
 * `embeddings.embed` tool, the search path (text queries) and ingestion all go through it.
 */
export interface Embedder {
  /** The model actually used, recorded on a collection so that only vectors of one model are compared. */
  readonly modelId: string;
  /** Length of every vector `embed` returns. */
  readonly dimensions: number;
  /** One vector per text, in order. Fails with a ConnectError whose code says who can fix it. */
  embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
}

/** Modalities of the shipping index templates (the template label `type`). */
export type Modality = "text" | "code" | "visual" | "object" | "face";

/** Modalities whose inputs are images: no local model can embed them. */
export const IMAGE_MODALITIES: ReadonlySet<string> = new Set(["visual", "object", "face"]);
