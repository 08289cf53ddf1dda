// Vector engine benchmark: recall@10 of the HNSW plan against exact search, and queries per second
// of both, unfiltered and with 10 % and 1 % metadata filters, on generated clustered vectors; then
// ingest throughput (chunks embedded with the local lexical embedder and upserted, per second).
// Vectors come from 100 clusters, each spanning a random 32-dimensional subspace of the 768
// dimensions plus a little isotropic noise: real embeddings have a low intrinsic dimension, and
// pure Gaussian noise would make every neighbour equally far, which no index can rank.
// Each query runs under every plan in turn (interleaved), so machine noise hits all plans alike.
// The filtered rows report the planner's choice (`auto`: an exact scan when at most 512 rows match,
// else HNSW with iterative scans and the exact fallback) and the HNSW walk forced for comparison.
// Run: npx tsx bench/vector-search.bench.ts [rows=10000] [queries=100] [ingestChunks=2000]
// (TEST_DATABASE_URL=postgres://… for PostgreSQL; the tables are dropped at the end)
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import postgres from "postgres";
import { LexicalHashEmbedder } from "../server/src/embeddings/lexical-hash-embedder.js";
import { denseSearch } from "../server/src/services/vector/engine/collection-search.js";
import { FilterOp } from "../server/src/services/vector/engine/metadata-filter.js";
import type { SearchOptions } from "../server/src/services/vector/engine/search-request.js";
import {
  pgliteExecutor,
  postgresExecutor,
  type SqlExecutor,
} from "../server/src/services/vector/engine/sql-executor.js";
import { VectorCollection, type ChunkInput } from "../server/src/services/vector/engine/vector-collection.js";

const [rows = 10_000, queryCount = 100, ingestChunks = 2_000] = process.argv.slice(2).map(Number);
const DIMS = 768;
const CLUSTERS = 100;
const LATENT = 32;
const TOP_K = 10;
const CHUNKS_PER_OBJECT = 10;

let seed = 42;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function gaussian(): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}
const centroids = Array.from({ length: CLUSTERS }, () => Array.from({ length: DIMS }, gaussian));
const bases = Array.from({ length: CLUSTERS }, () =>
  Array.from({ length: LATENT }, () => Array.from({ length: DIMS }, gaussian)),
);
function point(cluster: number): number[] {
  const centroid = centroids[cluster]!;
  const basis = bases[cluster]!;
  const v = centroid.map((c) => c + 0.1 * gaussian());
  for (const axis of basis) {
    const z = 0.35 * gaussian();
    for (let d = 0; d < DIMS; d++) v[d]! += z * axis[d]!;
  }
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

async function open(): Promise<{ executor: SqlExecutor; name: string; close(): Promise<void> }> {
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    const sql = postgres(url, { max: 2, onnotice: () => {} });
    await sql`CREATE EXTENSION IF NOT EXISTS vector`;
    const [{ version }] = await sql<
      [{ version: string }]
    >`SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`;
    return { executor: postgresExecutor(sql), name: `PostgreSQL (pgvector ${version})`, close: () => sql.end() };
  }
  const db = await PGlite.create({ extensions: { vector } });
  await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
  return { executor: pgliteExecutor(db), name: "embedded PGlite (pgvector 0.8)", close: () => db.close() };
}

const { executor, name, close } = await open();
console.log(`vector engine on ${name}: ${rows} x ${DIMS} vectors, ${queryCount} queries, topK ${TOP_K}`);
const collection = new VectorCollection(executor, { physicalName: `bench_${Date.now()}`, dimensions: DIMS });

const buckets: number[] = [];
let start = performance.now();
for (let object = 0; object * CHUNKS_PER_OBJECT < rows; object++) {
  const chunks: ChunkInput[] = [];
  for (let c = 0; c < CHUNKS_PER_OBJECT && object * CHUNKS_PER_OBJECT + c < rows; c++) {
    const i = object * CHUNKS_PER_OBJECT + c;
    // The bucket is drawn independently of the cluster, as most metadata is of the content.
    const bucket = Math.floor(random() * 100);
    buckets.push(bucket);
    chunks.push({ chunkIndex: c, content: "", metadata: { bucket }, embedding: point(i % CLUSTERS) });
  }
  await collection.upsertObject(`object-${object}`, chunks);
}
const loadSeconds = (performance.now() - start) / 1000;
console.log(
  `loaded in ${loadSeconds.toFixed(1)} s (${(rows / loadSeconds).toFixed(0)} vectors/s, HNSW built as rows arrive)`,
);

const queries = Array.from({ length: queryCount }, (_, i) => point(Math.floor(random() * CLUSTERS) + 0 * i));

/**
 * Runs every variant on every query, one query at a time across the variants, so that the noise of
 * a shared machine hits all of them alike; answers each variant's ids per query and its QPS.
 */
async function runInterleaved(variants: readonly SearchOptions[]): Promise<Array<{ ids: string[][]; qps: number }>> {
  // A warm-up pass over a few queries so caches are warm for every plan alike.
  for (const q of queries.slice(0, 5))
    for (const options of variants) await denseSearch(collection, [q], { ...options, topK: TOP_K });
  const results = variants.map(() => ({ ids: [] as string[][], ms: 0 }));
  for (const q of queries) {
    for (const [index, options] of variants.entries()) {
      const begin = performance.now();
      const hits = await denseSearch(collection, [q], { ...options, topK: TOP_K });
      results[index]!.ms += performance.now() - begin;
      results[index]!.ids.push(hits.map((h) => h.id));
    }
  }
  return results.map(({ ids, ms }) => ({ ids, qps: queries.length / (ms / 1000) }));
}

interface Case {
  readonly label: string;
  readonly matches: (bucket: number) => boolean;
  readonly filter?: SearchOptions["filter"];
}
const cases: Case[] = [
  { label: "unfiltered", matches: () => true },
  {
    label: "10 % filter",
    matches: (b) => b < 10,
    filter: { filters: [{ field: "bucket", op: FilterOp.LT, value: "10" }] },
  },
  {
    label: "1 % filter",
    matches: (b) => b === 7,
    filter: { filters: [{ field: "bucket", op: FilterOp.EQ, value: "7" }] },
  },
];

const table: string[] = [];
for (const c of cases) {
  const matches = buckets.filter(c.matches).length;
  const expected = Math.min(TOP_K, matches);
  const variants: Array<[string, SearchOptions]> = [
    ["auto (default ef = topK x 2)", { filter: c.filter }],
    ["HNSW forced (ef 20)", { filter: c.filter, plan: "hnsw" }],
    ["HNSW forced (ef 40)", { filter: c.filter, plan: "hnsw", searchParams: { ef: "40" } }],
  ];
  const [exact, ...measured] = await runInterleaved([
    { filter: c.filter, plan: "exact" },
    ...variants.map(([, options]) => options),
  ]);
  for (const [index, [label]] of variants.entries()) {
    const result = measured[index]!;
    let found = 0;
    let fewest = Number.POSITIVE_INFINITY;
    result.ids.forEach((ids, q) => {
      const truth = new Set(exact!.ids[q]);
      found += ids.filter((id) => truth.has(id)).length;
      fewest = Math.min(fewest, ids.length);
    });
    const recall = found / (queries.length * expected);
    table.push(
      `| ${c.label} (${matches} rows match) | ${label} | ${recall.toFixed(3)} | ${result.qps.toFixed(0)} | ${exact!.qps.toFixed(0)} | ${(result.qps / exact!.qps).toFixed(1)}x | ${fewest} of ${expected} |`,
    );
  }
}
console.log("\n| Query | Plan | recall@10 | QPS | exact-scan QPS | speed-up | fewest results |");
console.log("|---|---|---|---|---|---|---|");
for (const line of table) console.log(line);

// Ingest: chunks of generated prose embedded by the local embedder, then upserted, 10 per object.
const words =
  "order ship delivery invoice refund account password login error timeout server database index vector search query result filter metadata chunk document object bucket storage pipeline template embedding model cluster replica backup restore policy".split(
    " ",
  );
const embedder = new LexicalHashEmbedder(DIMS);
const ingest = new VectorCollection(executor, { physicalName: `bench_ingest_${Date.now()}`, dimensions: DIMS });
const texts = Array.from({ length: ingestChunks }, () =>
  Array.from({ length: 200 }, () => words[Math.floor(random() * words.length)]).join(" "),
);
start = performance.now();
let embedMs = 0;
for (let object = 0; object * CHUNKS_PER_OBJECT < ingestChunks; object++) {
  const batch = texts.slice(object * CHUNKS_PER_OBJECT, (object + 1) * CHUNKS_PER_OBJECT);
  const embedStart = performance.now();
  const vectors = await embedder.embed(batch, "document");
  embedMs += performance.now() - embedStart;
  await ingest.upsertObject(
    `doc-${object}`,
    batch.map((content, c) => ({
      chunkIndex: c,
      content,
      metadata: { source_key: `doc-${object}`, chunk_index: c },
      embedding: vectors[c]!,
    })),
  );
}
const ingestSeconds = (performance.now() - start) / 1000;
console.log(
  `\ningest: ${ingestChunks} chunks of ~1,400 characters in ${ingestSeconds.toFixed(1)} s = ${(ingestChunks / ingestSeconds).toFixed(0)} chunks/s ` +
    `(embedding alone ${(ingestChunks / (embedMs / 1000)).toFixed(0)} chunks/s; upserts with BM25 postings and HNSW the rest)`,
);

await collection.drop();
await ingest.drop();
await close();
