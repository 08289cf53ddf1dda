import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { SearchRequest, SearchResponseSchema } from "../../../../gen/platform/data/vector/v1/vector_service_pb.js";
import { IMAGE_MODALITIES } from "../../embeddings/embedder.js";
import type { EmbedderRegistry } from "../../embeddings/embedder-registry.js";
import { chooseCompatibleGroup, fanOutSearch, type CollectionStatusRow } from "./engine/collection-fan-out.js";
import { denseSearch, hybridSearch } from "./engine/collection-search.js";
import type { EngineHit, SearchOptions } from "./engine/search-request.js";
import { resolveSearchMode, SearchMode } from "./engine/search-mode.js";
import type { SqlExecutor } from "./engine/sql-executor.js";
import { VectorCollection } from "./engine/vector-collection.js";
import type { VectorCollectionDirectory, VectorCollectionInfo } from "./collection-directory.js";
import { unreachableAsUnavailable } from "./external-database.js";
import { parseSearch, invalid, type ParsedSearch } from "./search-query.js";
import type { VectorEngines } from "./vector-engines.js";

type SearchResponseInit = MessageInitShape<typeof SearchResponseSchema>;

/** The bucket's objects, read for s3_key queries; undefined when the key has no object. */
export interface QueryObjects {
  read(orgId: string, bucket: string, key: string, maxBytes: number): Promise<QueryObject | undefined>;
}

export interface QueryObject {
  readonly bytes: Uint8Array;
  readonly contentType: string;
}

/** Largest object an s3_key query embeds (the image is sent to the embeddings endpoint whole). */
export const MAX_QUERY_OBJECT_BYTES = 20 * 1024 * 1024;

export interface VectorSearchOptions {
  readonly engines: VectorEngines;
  readonly collections: VectorCollectionDirectory;
  readonly embedders: EmbedderRegistry;
  /** The storage service's objects, for s3_key queries; without it they are FAILED_PRECONDITION. */
  readonly objects?: QueryObjects;
  /** Gets an unexpected error of one collection's search (reported to the caller as a generic failReason). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Search: one query over one collection, or a fan-out over the bucket's compatible collections
 * (same dimensions, embedding type and embed model). Rules for each mode by sparse mode follow the
 * specification's table; a collection not yet materialized (no ingest yet), or a bucket whose
 * engine does not exist yet, answers no results rather than an error.
 */
export async function vectorSearch(
  options: VectorSearchOptions,
  orgId: string,
  request: SearchRequest,
  signal?: AbortSignal,
): Promise<SearchResponseInit> {
  const started = performance.now();
  if (request.bucket === "") throw invalid("bucket is required");
  const parsed = parseSearch(request);
  const reranker = parsed.rerankQuery === undefined ? undefined : options.embedders.reranker();
  if (parsed.rerankQuery !== undefined && reranker === undefined)
    throw new ConnectError(
      "rerank needs a rerank endpoint, and none is configured (the operator sets --rerank-url)",
      Code.FailedPrecondition,
    );

  // Grouped and embedded by the model each collection records (the one its vectors were made
  // with, resolved when it was created): a query is never embedded by another, and a model no
  // endpoint serves any more is FAILED_PRECONDITION rather than a silent stand-in.
  let collections = await options.collections.list(orgId, request.bucket);
  if (request.collectionName !== "") {
    collections = collections.filter((collection) => collection.name === request.collectionName);
    if (collections.length === 0)
      throw new ConnectError(
        `collection "${request.collectionName}" not found in bucket ${request.bucket}`,
        Code.NotFound,
      );
  }
  const warnings: string[] = [];
  const took = () => BigInt(Math.round(performance.now() - started));
  if (collections.length === 0)
    return { results: [], tookMs: took(), searchModeUsed: "vector", warnings, collectionStatuses: [] };

  const query = parsed.query;
  // An object is embedded by an image model: only the bucket's image collections can answer it.
  if (query.kind === "s3Key") {
    const images = collections.filter((collection) => IMAGE_MODALITIES.has(collection.modality));
    if (images.length === 0 || !options.objects) throw s3KeyUnavailable(collections);
    collections = images;
  }
  const named = request.collectionName !== "";
  const fanQuery =
    query.kind === "vector"
      ? { kind: "vector" as const, dimensions: query.vectors[0]?.length ?? 0 }
      : { kind: "text" as const };
  const { chosen, skipped } = chooseCompatibleGroup(collections, fanQuery);
  const leader = chosen[0];
  if (leader === undefined) throw noCompatibleCollection(parsed, collections, named);
  if (query.kind === "vector" && query.sparse.length > 0) {
    const other = chosen.find((collection) => collection.sparseMode !== "external");
    if (other)
      throw invalid(
        `vector.sparse_vectors: collection "${other.name}" has sparse mode ${other.sparseMode.toUpperCase()}; caller sparse vectors need sparse mode EXTERNAL`,
      );
  }

  // One embedding serves the whole group: its collections share model and dimensions.
  const queryVectors =
    query.kind === "vector"
      ? query.vectors
      : (
          await options.embedders
            .forModel(leader.embedModel, leader.dimensions)
            .embed(
              [query.kind === "text" ? query.text : await objectDataUrl(options.objects!, orgId, request, query.key)],
              "query",
              signal,
            )
        ).map((vector) => Array.from(vector));
  const queryText = query.kind === "text" ? query.text : undefined;

  const engine = await options.engines.find(orgId, request.bucket);
  let executor: Promise<SqlExecutor | undefined> | undefined;
  const executorOf = () =>
    (executor ??= (async () => {
      // No engine yet (nothing was ever ingested) or one still provisioning: nothing is materialized.
      if (!engine) return undefined;
      if (engine.status === "PENDING" || engine.status === "PROVISIONING") {
        warnings.push(`the bucket's vector engine is ${engine.status}: its collections are not searchable yet`);
        return undefined;
      }
      return (await options.engines.connection(engine)).executor;
    })());
  if (engine?.status === "ERROR") await executorOf();

  const input = request.query.case === "vector" ? request.query.value : undefined;
  const base: SearchOptions = {
    topK: parsed.topK,
    searchParams: input?.searchParams,
    partitionNames: input?.partitionNames,
    outputFields: input?.outputFields,
    filter: request.preFilter,
    includeContent: request.includeContent,
    includeHighlights: request.includeHighlights,
    queryText,
    rerank: reranker && parsed.rerankQuery ? { reranker, query: parsed.rerankQuery, signal } : undefined,
  };
  let hybridUsed = false;
  const searchOne = (collection: VectorCollectionInfo): Promise<EngineHit[]> =>
    searchCollection(collection).catch((error: unknown) => {
      throw unreachableAsUnavailable(error, request.bucket);
    });
  // One mode for the whole group: fused (RRF) scores and cosine scores cannot be ranked together.
  const hybridModes = chosen.map((collection) => hybridFor(collection, parsed, warnings));
  const hybrid = hybridModes.every(Boolean);
  if (!hybrid && hybridModes.some(Boolean))
    warnings.push("hybrid search needs every collection searched together to be hybrid: dense results for all");
  const searchCollection = async (collection: VectorCollectionInfo): Promise<EngineHit[]> => {
    const db = await executorOf();
    if (!db) return [];
    const physical = new VectorCollection(db, {
      physicalName: collection.physicalName,
      dimensions: collection.dimensions,
    });
    if (hybrid && queryText !== undefined) {
      hybridUsed = true;
      return hybridSearch(physical, queryVectors[0] as number[], queryText, base);
    }
    return denseSearch(physical, queryVectors, base);
  };
  const describe = (error: unknown) => {
    if (error instanceof ConnectError) return error.rawMessage;
    options.onError?.(error);
    return "the search of this collection failed";
  };
  let hits: EngineHit[];
  let statuses: CollectionStatusRow[];
  if (named) {
    // One collection asked for by name: its failure is the answer, not a status.
    hits = await searchOne(leader);
    statuses = [{ collection: leader.name, embeddingCompleted: true, searchCompleted: true, failReason: "" }];
  } else {
    // A batch keeps topK hits per query: the merge keeps them all, regrouped below.
    ({ hits, statuses } = await fanOutSearch(chosen, fanQuery, parsed.topK * queryVectors.length, searchOne, describe));
  }
  const ordered = query.kind === "vector" && query.batch ? perQuery(hits, parsed.topK) : hits.slice(0, parsed.topK);
  const byName = new Map<string, CollectionStatusRow>([...statuses, ...skipped].map((s) => [s.collection, s]));
  return {
    results: ordered.map((hit) => ({
      object: { bucket: request.bucket, key: hit.sourceKey },
      score: hit.score,
      metadata: hit.metadata,
      source: hit.source,
      chunkId: hit.id,
      chunkIndex: hit.chunkIndex,
      content: request.includeContent ? (hit.content ?? "") : undefined,
      highlight: request.includeHighlights ? (hit.highlight ?? "") : undefined,
      queryIndex: hit.queryIndex,
    })),
    tookMs: took(),
    searchModeUsed: hybridUsed ? "hybrid" : "vector",
    warnings: [...new Set(warnings)],
    collectionStatuses: collections.map((c) => byName.get(c.name) as CollectionStatusRow),
  };
}

/** Whether a collection is searched hybrid, per the mode table; notes in `warnings` why not when asked for. */
function hybridFor(collection: VectorCollectionInfo, parsed: ParsedSearch, warnings: string[]): boolean {
  if (collection.sparseMode === "external") {
    if (parsed.mode === "vector") return false;
    // The engine core keeps no sparse vectors yet, so there is nothing to fuse the caller's with.
    if (parsed.query.kind === "vector" && parsed.query.sparse.length > 0)
      warnings.push(
        `collection "${collection.name}" stores no sparse vectors yet: the caller's sparse vector was not fused, dense results only`,
      );
    else if (parsed.mode === "hybrid")
      warnings.push(`collection "${collection.name}": hybrid search needs a caller sparse vector; dense results only`);
    return false;
  }
  const requested = { vector: SearchMode.VECTOR, hybrid: SearchMode.HYBRID, auto: SearchMode.AUTO }[parsed.mode];
  const resolved = resolveSearchMode(requested, collection.sparseMode, parsed.query.kind === "text");
  if (resolved.warning) warnings.push(`collection "${collection.name}": ${resolved.warning}`);
  return resolved.mode === "hybrid";
}

/** Hits of a batch: topK per query, grouped by query_index, each group best first. */
function perQuery<H extends EngineHit>(hits: readonly H[], topK: number): H[] {
  const groups = new Map<number, H[]>();
  for (const hit of hits) {
    const index = hit.queryIndex ?? 0;
    const group = groups.get(index) ?? [];
    group.push(hit);
    groups.set(index, group);
  }
  return [...groups.keys()]
    .sort((a, b) => a - b)
    .flatMap((index) => (groups.get(index) as H[]).sort((a, b) => b.score - a.score).slice(0, topK));
}

/** Why no collection can answer the query: FAILED_PRECONDITION for text, INVALID_ARGUMENT for vectors. */
function noCompatibleCollection(
  parsed: ParsedSearch,
  collections: readonly VectorCollectionInfo[],
  named: boolean,
): ConnectError {
  const query = parsed.query;
  if (query.kind === "vector") {
    const field = query.batch ? "vector.vectors[0].values" : "vector.values";
    const dims = [...new Set(collections.map((c) => c.dimensions))].join(", ");
    return invalid(
      named
        ? `${field} has ${query.vectors[0]?.length} dimensions; collection "${collections[0]?.name}" has ${dims}`
        : `${field} has ${query.vectors[0]?.length} dimensions; the bucket's collections have ${dims}`,
    );
  }
  return new ConnectError(
    named
      ? `collection "${collections[0]?.name}" has no embed_model, so text cannot be embedded for it: embed the query yourself and send a vector query`
      : "no collection of the bucket has an embed_model, so text cannot be embedded: send a vector query",
    Code.FailedPrecondition,
  );
}

function s3KeyUnavailable(collections: readonly VectorCollectionInfo[]): ConnectError {
  const image = collections.find((c) => IMAGE_MODALITIES.has(c.modality));
  if (!image) {
    const first = collections[0] as VectorCollectionInfo;
    return new ConnectError(
      `s3_key queries need a collection from the visual, face or object embedding templates; "${first.name}" is a ${first.modality} collection: send text or a vector instead`,
      Code.FailedPrecondition,
    );
  }
  return new ConnectError(
    `s3_key queries on ${image.modality} collection "${image.name}" need an image embedder for model ${image.embedModel || "(none)"}, and none is configured: embed the image yourself and send a vector query`,
    Code.FailedPrecondition,
  );
}

/**
 * The object of an s3_key query as the image embedders take it: a data URL of its bytes, typed by
 * the request's content_type, else the stored type, else the key's extension.
 */
async function objectDataUrl(
  objects: QueryObjects,
  orgId: string,
  request: SearchRequest,
  key: string,
): Promise<string> {
  const object = await objects.read(orgId, request.bucket, key, MAX_QUERY_OBJECT_BYTES);
  if (!object) throw new ConnectError(`s3_key: object "${key}" not found in bucket ${request.bucket}`, Code.NotFound);
  const type = request.contentType || object.contentType || imageTypeOf(key);
  return `data:${type};base64,${Buffer.from(object.bytes).toString("base64")}`;
}

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
  tif: "image/tiff",
  tiff: "image/tiff",
};

function imageTypeOf(key: string): string {
  return IMAGE_TYPES[key.slice(key.lastIndexOf(".") + 1).toLowerCase()] ?? "application/octet-stream";
}
