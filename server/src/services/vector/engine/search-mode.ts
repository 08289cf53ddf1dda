import { SearchMode } from "../../../../../gen/platform/data/vector/v1/search_pb.js";

export { SearchMode };

/** How a collection holds sparse vectors (VectorConfig.sparseMode), as the engine needs it. */
export type SparseMode = "none" | "bm25" | "external";

/** The retrieval a request gets on one collection, and the warning to report when it differs from the request. */
export interface ResolvedMode {
  readonly mode: "vector" | "hybrid";
  readonly warning?: string;
}

/**
 * The spec's mode table: VECTOR (and UNSPECIFIED) is dense everywhere; HYBRID fuses dense with BM25
 * or the caller's sparse vectors, and on a collection without sparse vectors falls back to dense
 * with a warning; AUTO is hybrid only where the collection has sparse vectors. Hybrid over BM25
 * needs query text: a caller-vector query on a BM25 collection stays dense, with a warning.
 */
export function resolveSearchMode(requested: SearchMode, sparse: SparseMode, hasQueryText: boolean): ResolvedMode {
  if (requested === SearchMode.UNSPECIFIED || requested === SearchMode.VECTOR) return { mode: "vector" };
  if (sparse === "none") {
    return requested === SearchMode.HYBRID
      ? {
          mode: "vector",
          warning: "the collection has no sparse vectors (sparse mode NONE): searched dense vectors only",
        }
      : { mode: "vector" };
  }
  if (sparse === "bm25" && !hasQueryText)
    return { mode: "vector", warning: "BM25 needs query text; a vector query searched dense vectors only" };
  return { mode: "hybrid" };
}
