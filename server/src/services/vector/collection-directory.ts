import type { SparseMode } from "./engine/search-mode.js";

export type { SparseMode };

/**
 * A vector collection of a bucket, as the pipeline catalog knows it: a vector destination with
 * its VectorConfig and index pipeline. The vector service never reads the catalog's tables; the
 * server hands it a directory over the catalog's read interface.
 */
export interface VectorCollectionInfo {
  /** destination.name */
  readonly name: string;
  /** destination.store_entity_id */
  readonly storeEntityId: string;
  /** The index pipeline's id; empty when the collection has none (a free destination). */
  readonly pipelineId: string;
  /** destination.vector.physical_name (`<prefix>_<uuid>`), the table name in the engine's database. */
  readonly physicalName: string;
  readonly dimensions: number;
  /** The model id the collection's vectors are made with; empty for externally embedded ones. */
  readonly embedModel: string;
  /** `text`, `code`, `visual`, `object` or `face`. */
  readonly modality: string;
  readonly sparseMode: SparseMode;
  /** EmbeddingType's wire name (`EMBEDDING_TYPE_FLOAT`); only compared, never interpreted. */
  readonly embeddingType: string;
}

/** The bucket's vector collections, oldest first; another organization's bucket has none. */
export interface VectorCollectionDirectory {
  list(orgId: string, bucket: string): Promise<VectorCollectionInfo[]>;
}

/** Whether a bucket exists in an organization; without one, every bucket name is taken as existing. */
export interface BucketDirectory {
  exists(orgId: string, bucket: string): Promise<boolean>;
}
