import {
  EmbeddingType,
  EmbeddingTypeSchema,
  SparseMode,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { PipelineCatalogReader } from "../pipeline/pipeline-service.js";
import type { SparseMode as StoredSparseMode, VectorCollectionDirectory } from "./collection-directory.js";

/**
 * The vector service's view of the pipeline catalog, through the catalog's in-process read
 * interface (never its tables).
 */
export function catalogCollectionDirectory(
  catalog: Pick<PipelineCatalogReader, "listVectorCollections">,
): VectorCollectionDirectory {
  return {
    async list(orgId, bucket) {
      const rows = await catalog.listVectorCollections(orgId, bucket);
      return rows.map((row) => ({
        name: row.destination.name,
        storeEntityId: row.destination.storeEntityId,
        pipelineId: row.pipelineId,
        physicalName: row.vector.physicalName,
        dimensions: row.vector.dimensions,
        embedModel: row.vector.embedModel,
        modality: row.vector.modality,
        sparseMode: sparseModeOf(row.vector.sparseMode),
        embeddingType: embeddingTypeName(row.vector.embeddingType),
      }));
    },
  };
}

/** UNSPECIFIED is what rows written before the field existed hold: no sparse vectors, as NONE. */
function sparseModeOf(mode: SparseMode): StoredSparseMode {
  if (mode === SparseMode.BM25) return "bm25";
  if (mode === SparseMode.EXTERNAL) return "external";
  return "none";
}

/** The wire name, with UNSPECIFIED read as the default FLOAT so that old and new rows group together. */
function embeddingTypeName(type: EmbeddingType): string {
  const effective = type === EmbeddingType.UNSPECIFIED ? EmbeddingType.FLOAT : type;
  return EmbeddingTypeSchema.values.find((value) => value.number === effective)?.name ?? `EMBEDDING_TYPE_${effective}`;
}
