/**
 * Limits of the data-plane vector API (documented on VectorDataService). Per-request counts
 * follow the hosted vector databases callers come from (1,000 records, 512-character ids, 40 KB
 * of metadata), which keeps one upsert's transaction and one query's answer small; the dimension
 * is pgvector's: `vector(n)` holds at most 16,000 and an HNSW index at most 2,000.
 */
export const MAX_UPSERT_VECTORS = 1000;
export const MAX_DELETE_IDS = 1000;
export const MAX_ID_LENGTH = 512;
export const MAX_METADATA_BYTES = 40 * 1024;
export const MAX_DIMENSION = 16_000;
export const MAX_INDEXED_DIMENSION = 2000;
export const DEFAULT_TOP_K = 10;
export const MAX_TOP_K = 1000;
