import { Code, ConnectError } from "@connectrpc/connect";
import type { VectorRecord } from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";
import { MAX_DIMENSION, MAX_ID_LENGTH, MAX_METADATA_BYTES, MAX_UPSERT_VECTORS } from "./vector-limits.js";

/** pgvector stores 32-bit floats; a larger magnitude is refused by the database. */
const MAX_FLOAT32 = 3.4028234663852886e38;

/** One row as it is bound: pgvector's text form and the metadata as JSON text (or null). */
export interface VectorRow {
  readonly id: string;
  readonly embedding: string;
  readonly metadata: string | null;
}

/**
 * Checks an upsert's vectors and turns them into rows. Every vector must have `dimension`
 * components (the table's; `reason` says where it comes from); the error names the offending
 * field so a caller can find it in a batch of a thousand.
 */
export function vectorRows(vectors: readonly VectorRecord[], dimension: number, reason: string): VectorRow[] {
  checkBatchSize(vectors);
  const seen = new Set<string>();
  return vectors.map((vector, index) => {
    const field = `vectors[${index}]`;
    checkId(vector.id, `${field}.id`);
    if (seen.has(vector.id)) throw invalid(`${field}.id ${JSON.stringify(vector.id)} appears twice in vectors`);
    seen.add(vector.id);
    return {
      id: vector.id,
      embedding: vectorText(vector.values, dimension, `${field}.values`, reason),
      metadata: metadataText(vector.metadata, `${field}.metadata`),
    };
  });
}

/** 1 to MAX_UPSERT_VECTORS vectors: checked before the engine database is touched. */
export function checkBatchSize(vectors: readonly VectorRecord[]): void {
  if (vectors.length === 0) throw invalid("vectors must hold at least one vector");
  if (vectors.length > MAX_UPSERT_VECTORS)
    throw invalid(`vectors holds ${vectors.length} vectors; at most ${MAX_UPSERT_VECTORS} may be upserted at once`);
}

/** pgvector's text form of a vector, checked against `dimension`; `reason` says where that comes from. */
export function vectorText(values: readonly number[], dimension: number, field: string, reason: string): string {
  if (values.length === 0) throw invalid(`${field} must hold at least one value`);
  if (values.length > MAX_DIMENSION)
    throw invalid(`${field} has ${values.length} dimensions; at most ${MAX_DIMENSION} are stored`);
  if (values.length !== dimension) throw invalid(`${field} has ${values.length} dimensions; ${reason}`);
  for (let i = 0; i < values.length; i++) {
    // NaN and Infinity would be refused by pgvector with an error that is not the caller's to read.
    const value = values[i]!;
    if (!Number.isFinite(value) || Math.abs(value) > MAX_FLOAT32)
      throw invalid(`${field}[${i}] must be a finite 32-bit float`);
  }
  return `[${values.join(",")}]`;
}

export function checkId(id: string, field: string): void {
  if (id === "") throw invalid(`${field} is required`);
  if (id.length > MAX_ID_LENGTH) throw invalid(`${field} is longer than ${MAX_ID_LENGTH} characters`);
}

function metadataText(metadata: VectorRecord["metadata"], field: string): string | null {
  if (metadata === undefined) return null;
  const text = JSON.stringify(metadata);
  // jsonb cannot hold U+0000 and refuses it with a database error; refuse it here, by name.
  if (text.includes("\\u0000")) throw invalid(`${field} must not hold the character U+0000`);
  if (Buffer.byteLength(text) > MAX_METADATA_BYTES)
    throw invalid(`${field} is larger than ${MAX_METADATA_BYTES} bytes of JSON`);
  return text;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
