import { Code, ConnectError } from "@connectrpc/connect";

/**
 * HNSW build parameters. m = 16 links per node and ef_construction = 64 candidates while building
 * are pgvector's defaults: at 768 dimensions they give recall@10 above 0.95 with ef_search of a few
 * tens (bench/RESULTS.md), while a larger m costs memory on every row and a larger
 * ef_construction only slows ingestion. Search-time quality is tuned per query (`ef`).
 */
export const HNSW_M = 16;
export const HNSW_EF_CONSTRUCTION = 64;
/** pgvector's largest vector(n) an HNSW index accepts. */
export const MAX_DIMENSIONS = 2000;

/** Physical names are generated (`<prefix>_<uuid>`); the limit leaves room for the side tables' suffixes in 63 bytes. */
const PHYSICAL_NAME = /^[a-z][a-z0-9_-]{0,49}$/;

/** The quoted identifiers of a collection's tables and indexes. */
export interface CollectionTables {
  /** One row per chunk: id, source_key, chunk_index, content, metadata, embedding, partition, doc_length. */
  readonly chunks: string;
  /** BM25 postings: (term, chunk id, term frequency). */
  readonly terms: string;
  /** BM25 document frequencies: (term, df). */
  readonly df: string;
  /** BM25 corpus statistics: one row (doc_count, total_length). */
  readonly stats: string;
  /** Names for indexes, unquoted. */
  readonly raw: string;
}

export function collectionTables(physicalName: string): CollectionTables {
  if (!PHYSICAL_NAME.test(physicalName))
    throw new ConnectError(
      `physicalName ${JSON.stringify(physicalName)} must be 1-50 characters of a-z, 0-9, _ and -, starting with a letter`,
      Code.InvalidArgument,
    );
  const quote = (suffix: string) => `"${physicalName}${suffix}"`;
  return { chunks: quote(""), terms: quote("__terms"), df: quote("__df"), stats: quote("__stats"), raw: physicalName };
}

/**
 * The statements that create a collection, all idempotent. The chunk id is
 * `source_key#chunk_index`; the object's chunks are found again by source_key (indexed) when it is
 * replaced or deleted. BM25 postings cascade with their chunk. `doc_length` is the chunk's token
 * count, kept on the row because BM25's length normalisation reads it for every posting.
 */
export function createCollectionStatements(tables: CollectionTables, dimensions: number): string[] {
  const { chunks, terms, df, stats, raw } = tables;
  return [
    `CREATE TABLE IF NOT EXISTS ${chunks} (
      id text PRIMARY KEY,
      source_key text NOT NULL,
      chunk_index integer NOT NULL,
      content text NOT NULL DEFAULT '',
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      embedding vector(${dimensions}) NOT NULL,
      partition text NOT NULL DEFAULT '',
      doc_length integer NOT NULL DEFAULT 0
    )`,
    `CREATE INDEX IF NOT EXISTS "${raw}__source_key" ON ${chunks} (source_key)`,
    `CREATE INDEX IF NOT EXISTS "${raw}__hnsw" ON ${chunks} USING hnsw (embedding vector_cosine_ops) WITH (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION})`,
    `CREATE TABLE IF NOT EXISTS ${terms} (
      term text NOT NULL,
      id text NOT NULL REFERENCES ${chunks} (id) ON DELETE CASCADE,
      tf integer NOT NULL,
      PRIMARY KEY (term, id)
    )`,
    `CREATE INDEX IF NOT EXISTS "${raw}__terms_id" ON ${terms} (id)`,
    `CREATE TABLE IF NOT EXISTS ${df} (term text PRIMARY KEY, df integer NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${stats} (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      doc_count bigint NOT NULL DEFAULT 0,
      total_length bigint NOT NULL DEFAULT 0
    )`,
    `INSERT INTO ${stats} (singleton) VALUES (true) ON CONFLICT DO NOTHING`,
  ];
}

export function dropCollectionStatements(tables: CollectionTables): string[] {
  return [tables.terms, tables.df, tables.stats, tables.chunks].map((table) => `DROP TABLE IF EXISTS ${table} CASCADE`);
}
