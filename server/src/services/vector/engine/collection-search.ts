import { Code, ConnectError } from "@connectrpc/connect";
import { BM25_B, BM25_K1, queryTerms } from "./bm25-terms.js";
import { highlightSnippet } from "./highlight.js";
import { compileFilter } from "./metadata-filter.js";
import { reciprocalRankFusion } from "./reciprocal-rank-fusion.js";
import {
  checkedEf,
  checkedTopK,
  DEFAULT_EXACT_SCAN_THRESHOLD,
  MAX_EF,
  MAX_TOP_K,
  outputMetadata,
  type EngineHit,
  type SearchOptions,
} from "./search-request.js";
import type { SqlParam } from "./sql-executor.js";
import type { VectorCollection } from "./vector-collection.js";
import { vectorLiteral } from "./vector-literal.js";

interface Row {
  id: string;
  source_key: string;
  chunk_index: number;
  content: string;
  metadata: Record<string, unknown> | string;
  score: number;
}

/** The WHERE clause of a search: the metadata filter and the partitions, with their parameters. */
function whereClause(options: SearchOptions, params: SqlParam[]): string {
  const parts = [compileFilter(options.filter, params)];
  const partitions = options.partitionNames ?? [];
  if (partitions.length > 0) {
    params.push(partitions);
    parts.push(`partition = ANY($${params.length}::text[])`);
  }
  return parts.filter((part) => part !== "true").join(" AND ") || "true";
}

/**
 * Dense search: cosine similarity (score = 1 - distance), one query or a batch (hits then carry
 * queryIndex). Nothing is lost to filtering: the plan counts the matching rows (up to a bound)
 * and scans them exactly when they are few; otherwise it walks the HNSW graph with pgvector's
 * iterative index scan (which keeps walking until LIMIT rows pass the filter), and falls back to
 * the exact scan when the walk still returns fewer than min(topK, matches).
 */
export async function denseSearch(
  collection: VectorCollection,
  queries: ReadonlyArray<ArrayLike<number>>,
  options: SearchOptions = {},
): Promise<EngineHit[]> {
  const topK = checkedTopK(options.topK);
  // A reranker needs more candidates than it returns to change anything.
  const fetchK = options.rerank ? Math.min(MAX_TOP_K, topK * 4) : topK;
  const ef = checkedEf(options.searchParams, fetchK);
  if (queries.length === 0) throw new ConnectError("vector: give values or vectors", Code.InvalidArgument);
  if (queries.length > MAX_BATCH_QUERIES)
    throw new ConnectError(
      `vector.vectors: at most ${MAX_BATCH_QUERIES} query vectors per request, got ${queries.length}`,
      Code.InvalidArgument,
    );
  const literals = queries.map((query, index) =>
    vectorLiteral(
      query,
      collection.dimensions,
      queries.length > 1 ? `vector.vectors[${index}].values` : "vector.values",
    ),
  );
  const params: SqlParam[] = [];
  const where = whereClause(options, params);
  if (!(await collection.exists())) return [];
  const plan = await planDense(collection, where, params, fetchK, ef, options);
  const hits: EngineHit[] = [];
  for (const [index, literal] of literals.entries()) {
    let rows: Row[] = [];
    if (!plan.exact) rows = await nearest(collection, where, params, literal, fetchK, plan.ef, false);
    // The graph walk gave too few (a filter it could not satisfy within hnsw.max_scan_tuples): scan.
    if (plan.exact || rows.length < plan.expected)
      rows = await nearest(collection, where, params, literal, fetchK, plan.ef, true);
    const queryIndex = queries.length > 1 ? index : undefined;
    hits.push(...(await finish(rows, "VECTOR", options, topK, queryIndex)));
  }
  return hits;
}

/** Query vectors one batch may hold: each is a search of its own. */
export const MAX_BATCH_QUERIES = 64;

/** Rows read to estimate how selective a filter is. */
const SELECTIVITY_SAMPLE = 2000;

interface DensePlan {
  readonly exact: boolean;
  /** Fewer HNSW results than this means the walk missed some: scan exactly instead. */
  readonly expected: number;
  /** hnsw.ef_search for the walk. */
  readonly ef: number;
}

/**
 * Chooses between the exact scan and the HNSW walk. A filter is first measured on a sample: when
 * it may match few rows, a bounded count decides (few: exact). When it matches many, the walk's
 * ef is divided by the filter's selectivity, because only that share of the candidates the walk
 * collects survives the filter: with ef 20 and a 10 % filter, 2 of 20 candidates would match and
 * recall would suffer; with ef 200, about 20 do.
 */
async function planDense(
  collection: VectorCollection,
  where: string,
  params: readonly SqlParam[],
  topK: number,
  ef: number,
  options: SearchOptions,
): Promise<DensePlan> {
  const threshold = options.exactScanThreshold ?? DEFAULT_EXACT_SCAN_THRESHOLD;
  const total = await collection.count();
  const decide = (matches: number, scaledEf: number): DensePlan => ({
    exact: options.plan === "exact" || (options.plan !== "hnsw" && matches <= threshold),
    expected: Math.min(topK, matches),
    ef: scaledEf,
  });
  if (where === "true") return decide(total, ef);
  const [sample] = await collection.executor.query<{ m: number; n: number }>(
    `SELECT (count(*) FILTER (WHERE ${where}))::int AS m, count(*)::int AS n
     FROM (SELECT metadata, partition FROM ${collection.tables.chunks} LIMIT ${SELECTIVITY_SAMPLE}) sample`,
    params,
  );
  const sampled = sample?.n ?? 0;
  const sampledMatches = sample?.m ?? 0;
  // The sample is the whole collection: its count is exact.
  if (sampled < SELECTIVITY_SAMPLE) return decide(sampledMatches, scaleEf(ef, sampledMatches, sampled));
  const estimate = (sampledMatches / sampled) * total;
  if (estimate <= threshold * 2) {
    // Possibly few: count them, up to a bound, to know whether an exact scan is cheap and how many topK can give.
    const bound = Math.max(threshold, topK) + 1;
    const [row] = await collection.executor.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${collection.tables.chunks} WHERE ${where} LIMIT ${bound}) matching`,
      params,
    );
    const matches = row?.n ?? 0;
    return decide(matches, scaleEf(ef, Math.max(matches, 1), total));
  }
  return decide(Math.round(estimate), scaleEf(ef, Math.max(sampledMatches, 1), sampled));
}

/** ef divided by the filter's selectivity (matching of rows), within pgvector's bound. */
function scaleEf(ef: number, matching: number, rows: number): number {
  if (matching <= 0 || rows <= 0 || matching >= rows) return ef;
  return Math.min(MAX_EF, Math.max(ef, Math.ceil((ef * rows) / matching)));
}

async function nearest(
  collection: VectorCollection,
  where: string,
  params: readonly SqlParam[],
  literal: string,
  topK: number,
  ef: number,
  exact: boolean,
): Promise<Row[]> {
  const all = [...params, literal];
  const q = `$${all.length}::vector`;
  return collection.executor.transaction(async (tx) => {
    // set_config(…, true) is SET LOCAL: the settings end with the transaction. One statement, one round trip.
    if (exact) {
      // Without index scans the planner sorts the matching rows by their true distance.
      await tx.query(`SELECT set_config('enable_indexscan', 'off', true)`);
    } else {
      // The plan is decided here, not by the planner: without fresh statistics (a collection
      // filling up) it often prefers a sequential scan, and then `ef` and the walk mean nothing.
      // relaxed_order may return a few rows slightly out of order; the outer ORDER BY restores it.
      await tx.query(
        `SELECT set_config('enable_seqscan', 'off', true), set_config('hnsw.ef_search', $1, true),
                set_config('hnsw.iterative_scan', 'relaxed_order', true)`,
        [String(ef)],
      );
    }
    return tx.query<Row>(
      `WITH candidates AS MATERIALIZED (
         SELECT id, source_key, chunk_index, content, metadata, (embedding <=> ${q}) AS distance
         FROM ${collection.tables.chunks} WHERE ${where}
         ORDER BY embedding <=> ${q} LIMIT ${topK})
       SELECT id, source_key, chunk_index, content, metadata, (1 - distance)::float8 AS score
       FROM candidates ORDER BY distance, id`,
      all,
    );
  });
}

/**
 * BM25 over the collection's postings (k1 1.2, b 0.75, Lucene's non-negative IDF) with the corpus
 * statistics kept on every write, so scores are exact for the whole collection, filters applied.
 */
export async function lexicalSearch(
  collection: VectorCollection,
  text: string,
  options: SearchOptions = {},
): Promise<EngineHit[]> {
  const topK = checkedTopK(options.topK);
  const terms = queryTerms(text);
  if (terms.length === 0 || !(await collection.exists())) return [];
  const rows = await bm25Rows(collection, terms, options.rerank ? Math.min(MAX_TOP_K, topK * 4) : topK, options);
  return finish(rows, "FULLTEXT", { ...options, queryText: options.queryText ?? text }, topK, undefined);
}

async function bm25Rows(
  collection: VectorCollection,
  terms: readonly string[],
  limit: number,
  options: SearchOptions,
): Promise<Row[]> {
  const { chunks, terms: postings, df, stats } = collection.tables;
  const params: SqlParam[] = [terms];
  const where = whereClause(options, params);
  return collection.executor.query<Row>(
    `WITH corpus AS (
       SELECT doc_count::float8 AS n, CASE WHEN doc_count > 0 THEN total_length::float8 / doc_count ELSE 1 END AS avgdl
       FROM ${stats}),
     scored AS (
       SELECT p.id, sum(
         ln(1 + (corpus.n - d.df + 0.5) / (d.df + 0.5))
         * (p.tf * ${BM25_K1 + 1}) / (p.tf + ${BM25_K1} * (1 - ${BM25_B} + ${BM25_B} * c.doc_length / corpus.avgdl))
       ) AS score
       FROM ${postings} p
       JOIN ${df} d ON d.term = p.term
       JOIN ${chunks} c ON c.id = p.id
       CROSS JOIN corpus
       WHERE p.term = ANY($1::text[]) AND ${where}
       GROUP BY p.id)
     SELECT c.id, c.source_key, c.chunk_index, c.content, c.metadata, s.score::float8 AS score
     FROM scored s JOIN ${chunks} c ON c.id = s.id
     ORDER BY s.score DESC, c.id LIMIT ${limit}`,
    params,
  );
}

/**
 * Hybrid: the dense and the BM25 candidate lists (each a few times topK long) fused by reciprocal
 * rank fusion with k = 60; the score is the fused score. Without query terms it is dense search.
 */
export async function hybridSearch(
  collection: VectorCollection,
  query: ArrayLike<number>,
  text: string,
  options: SearchOptions = {},
): Promise<EngineHit[]> {
  const topK = checkedTopK(options.topK);
  const candidates = Math.min(MAX_TOP_K, Math.max(topK * 4, 40));
  const inner = { ...options, topK: candidates, includeContent: true, includeHighlights: false, rerank: undefined };
  const dense = await denseSearch(collection, [query], inner);
  const terms = queryTerms(text);
  const lexical =
    terms.length === 0 || !(await collection.exists()) ? [] : await bm25Rows(collection, terms, candidates, options);
  const byId = new Map<string, Row>();
  for (const hit of dense)
    byId.set(hit.id, {
      id: hit.id,
      source_key: hit.sourceKey,
      chunk_index: hit.chunkIndex,
      content: hit.content ?? "",
      metadata: hit.metadata,
      score: hit.score,
    });
  for (const row of lexical) if (!byId.has(row.id)) byId.set(row.id, row);
  const fused = reciprocalRankFusion([dense.map((hit) => hit.id), lexical.map((row) => row.id)]);
  const rows = fused.map(({ id, score }) => ({ ...(byId.get(id) as Row), score }));
  // Dense hits carry metadata already cut to the output fields; finish applies the same cut again harmlessly.
  return finish(rows, "HYBRID", { ...options, queryText: options.queryText ?? text }, topK, undefined);
}

/** Rerank, cut to topK, then shape the hits: output fields, highlights, content only when asked. */
async function finish(
  rows: Row[],
  source: EngineHit["source"],
  options: SearchOptions,
  topK: number,
  queryIndex: number | undefined,
): Promise<EngineHit[]> {
  let ordered = rows;
  if (options.rerank && rows.length > 0) {
    const { reranker, query, signal } = options.rerank;
    const scores = await reranker.rerank(
      query,
      rows.map((row) => row.content),
      signal,
    );
    ordered = rows.map((row, index) => ({ ...row, score: scores[index] as number })).sort((a, b) => b.score - a.score);
  }
  const terms = options.includeHighlights ? queryTerms(options.queryText ?? "") : [];
  return ordered.slice(0, topK).map((row) => {
    const metadata =
      typeof row.metadata === "string" ? (JSON.parse(row.metadata) as Record<string, unknown>) : row.metadata;
    const hit: EngineHit = {
      id: row.id,
      sourceKey: row.source_key,
      chunkIndex: row.chunk_index,
      score: Number(row.score),
      metadata: outputMetadata(metadata, options.outputFields),
      source,
      ...(queryIndex === undefined ? {} : { queryIndex }),
    };
    if (options.includeContent) hit.content = row.content;
    if (options.includeHighlights) hit.highlight = highlightSnippet(row.content, terms);
    return hit;
  });
}
