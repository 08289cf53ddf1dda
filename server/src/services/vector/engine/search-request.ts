import { Code, ConnectError } from "@connectrpc/connect";
import type { Reranker } from "../../../embeddings/rerank-client.js";
import type { FilterGroupInput } from "./metadata-filter.js";

export const DEFAULT_TOP_K = 10;
export const MAX_TOP_K = 1000;
/** pgvector's ceiling for hnsw.ef_search. */
export const MAX_EF = 1000;
/**
 * Up to this many matching rows, a filtered search scans them exactly instead of walking the HNSW
 * graph: computing a few hundred distances is cheaper than an index walk that skips most of what
 * it visits, and exact results need no fallback.
 */
export const DEFAULT_EXACT_SCAN_THRESHOLD = 512;

/** What one collection search is asked, shared by dense, BM25 and hybrid search. */
export interface SearchOptions {
  /** Results wanted per query; 0 or absent means 10. */
  readonly topK?: number;
  /** VectorInput.search_params: `ef` (default topK x 2) and `metric_type` (only COSINE). */
  readonly searchParams?: Readonly<Record<string, string>>;
  readonly partitionNames?: readonly string[];
  /** Metadata fields returned; all when empty. */
  readonly outputFields?: readonly string[];
  readonly filter?: FilterGroupInput;
  readonly includeContent?: boolean;
  readonly includeHighlights?: boolean;
  /** The query's text, for highlights, BM25 and rerank (absent for caller vectors). */
  readonly queryText?: string;
  /** Reorders the candidates with a cross-encoder before they are cut to topK. */
  readonly rerank?: { readonly reranker: Reranker; readonly query: string; readonly signal?: AbortSignal };
  /** Tests and the benchmark force a plan: `exact` scans, `hnsw` walks the index (with the exact fallback). */
  readonly plan?: "auto" | "exact" | "hnsw";
  readonly exactScanThreshold?: number;
}

/** One hit of one collection; the RPC layer turns it into a SearchResult (object = bucket + sourceKey). */
export interface EngineHit {
  /** `source_key#chunk_index`. */
  readonly id: string;
  readonly sourceKey: string;
  readonly chunkIndex: number;
  /** Higher is more relevant: 1 - cosine distance, a BM25 score, an RRF score or a rerank score. */
  score: number;
  /** Output fields, stringified (strings as they are, anything else as JSON). */
  readonly metadata: Record<string, string>;
  readonly source: "VECTOR" | "FULLTEXT" | "HYBRID";
  content?: string;
  highlight?: string;
  /** Index of the query in a batch (VectorInput.vectors); absent for a single query. */
  readonly queryIndex?: number;
}

export function checkedTopK(topK: number | undefined): number {
  const value = topK === undefined || topK === 0 ? DEFAULT_TOP_K : topK;
  if (!Number.isInteger(value) || value < 1 || value > MAX_TOP_K)
    throw new ConnectError(`topK must be an integer from 1 to ${MAX_TOP_K}, got ${topK}`, Code.InvalidArgument);
  return value;
}

/** hnsw.ef_search for a query: searchParams.ef, else topK x 2, within pgvector's bounds. */
export function checkedEf(searchParams: Readonly<Record<string, string>> | undefined, topK: number): number {
  const metric = searchParams?.metric_type;
  if (metric !== undefined && metric.toUpperCase() !== "COSINE")
    throw new ConnectError(
      `searchParams.metric_type: collections are indexed for COSINE; got ${JSON.stringify(metric)}`,
      Code.InvalidArgument,
    );
  const text = searchParams?.ef;
  if (text === undefined) return Math.min(MAX_EF, topK * 2);
  const ef = Number(text);
  if (!/^[0-9]+$/.test(text.trim()) || ef < 1 || ef > MAX_EF)
    throw new ConnectError(
      `searchParams.ef must be an integer from 1 to ${MAX_EF}, got ${JSON.stringify(text)}`,
      Code.InvalidArgument,
    );
  return ef;
}

/** Metadata as SearchResult.metadata: the output fields only (all when none are named), stringified. */
export function outputMetadata(
  metadata: Record<string, unknown>,
  fields: readonly string[] | undefined,
): Record<string, string> {
  const names = fields && fields.length > 0 ? fields : Object.keys(metadata);
  const result: Record<string, string> = {};
  for (const name of names) {
    const value = metadata[name];
    if (value === undefined || value === null) continue;
    result[name] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return result;
}
