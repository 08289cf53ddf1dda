import { Code, ConnectError } from "@connectrpc/connect";
import { SearchMode } from "../../../../gen/platform/data/vector/v1/search_pb.js";
import type { SearchRequest } from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import { compileFilter } from "./engine/metadata-filter.js";
import { checkedEf, checkedTopK } from "./engine/search-request.js";

/** A search request's query, checked: one of the three shapes. */
export type ParsedQuery =
  | { readonly kind: "text"; readonly text: string }
  /** `batch` when the caller sent VectorInput.vectors (hits then carry query_index). */
  | {
      readonly kind: "vector";
      readonly vectors: readonly number[][];
      readonly batch: boolean;
      readonly sparse: ReadonlyArray<{ indices: number[]; values: number[] }>;
    }
  | { readonly kind: "s3Key"; readonly key: string };

export type RequestedMode = "vector" | "hybrid" | "auto";

export interface ParsedSearch {
  readonly query: ParsedQuery;
  readonly topK: number;
  readonly mode: RequestedMode;
  /** The text a reranker scores candidates against (rerank_text, else the query text). */
  readonly rerankQuery: string | undefined;
}

/**
 * Checks what a search request says on its own, before any collection is looked at: the query
 * shape, topK, searchParams, the filter and rerank. Bad input is INVALID_ARGUMENT naming the field;
 * a batch with caller sparse vectors is UNIMPLEMENTED.
 */
export function parseSearch(request: SearchRequest): ParsedSearch {
  const query = parseQuery(request);
  const topK = checkedTopK(request.topK);
  if (query.kind === "vector") {
    checkedEf(request.query.case === "vector" ? request.query.value.searchParams : undefined, topK);
  }
  // Compiled once here so that a bad filter is one clear error, not a failure per collection.
  compileFilter(request.preFilter, []);
  const mode = requestedMode(request.searchMode);
  let rerankQuery: string | undefined;
  if (request.rerank) {
    rerankQuery = request.rerankText.trim() !== "" ? request.rerankText : query.kind === "text" ? query.text : "";
    if (rerankQuery === "") throw invalid("rerank_text is required to rerank a vector or s3_key query");
  }
  return { query, topK, mode, rerankQuery };
}

function parseQuery(request: SearchRequest): ParsedQuery {
  const query = request.query;
  switch (query.case) {
    case "text":
      if (query.value.trim() === "") throw invalid("text must not be empty");
      return { kind: "text", text: query.value };
    case "s3Key":
      if (query.value === "") throw invalid("s3_key must not be empty");
      return { kind: "s3Key", key: query.value };
    case "vector": {
      const input = query.value;
      const single = input.values;
      const batch = input.vectors.map((vector) => vector.values);
      if (single.length > 0 && batch.length > 0) throw invalid("vector: set values or vectors, not both");
      if (single.length === 0 && batch.length === 0) throw invalid("vector.values or vector.vectors is required");
      const vectors = batch.length > 0 ? batch : [single];
      vectors.forEach((values, index) => {
        if (batch.length > 0 && values.length === 0) throw invalid(`vector.vectors[${index}].values is empty`);
        if (values.length !== vectors[0]?.length)
          throw invalid(
            `vector.vectors[${index}].values has ${values.length} dimensions; vector.vectors[0] has ${vectors[0]?.length}`,
          );
      });
      const sparse = input.sparseVectors.map((vector, index) => {
        if (vector.indices.length !== vector.values.length)
          throw invalid(`vector.sparse_vectors[${index}]: indices and values must have the same length`);
        if (vector.indices.some((position) => position < 0))
          throw invalid(`vector.sparse_vectors[${index}].indices must not be negative`);
        return { indices: vector.indices, values: vector.values };
      });
      if (sparse.length > 0 && batch.length > 1)
        throw new ConnectError(
          "caller sparse vectors with a multi-vector batch are not supported: send one request per query vector",
          Code.Unimplemented,
        );
      if (sparse.length > 1) throw invalid("vector.sparse_vectors: one sparse vector per query vector");
      return { kind: "vector", vectors, batch: batch.length > 0, sparse };
    }
    default:
      throw invalid("exactly one of text, vector or s3_key is required");
  }
}

function requestedMode(mode: SearchMode): RequestedMode {
  switch (mode) {
    case SearchMode.UNSPECIFIED:
    case SearchMode.VECTOR:
      return "vector";
    case SearchMode.HYBRID:
      return "hybrid";
    case SearchMode.AUTO:
      return "auto";
    default:
      throw invalid(`search_mode: unknown value ${String(mode)}`);
  }
}

export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
