import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DestinationSchema,
  EmbeddingType,
  SparseMode,
  VectorConfigSchema,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import { catalogCollectionDirectory } from "./catalog-collection-directory.js";

describe("catalogCollectionDirectory", () => {
  it("reads the catalog's vector destinations as collections, scoped by organization and bucket", async () => {
    const asked: string[] = [];
    const directory = catalogCollectionDirectory({
      async listVectorCollections(orgId, bucket) {
        asked.push(`${orgId}/${bucket}`);
        return [
          {
            destination: create(DestinationSchema, { name: "docs", storeEntityId: "d-1" }),
            pipelineId: "p-1",
            vector: create(VectorConfigSchema, {
              physicalName: "vc_0123",
              dimensions: 768,
              embedModel: "nomic-embed-text-v1.5",
              modality: "text",
              sparseMode: SparseMode.NONE,
              embeddingType: EmbeddingType.UNSPECIFIED,
            }),
          },
          {
            destination: create(DestinationSchema, { name: "hybrid", storeEntityId: "d-2" }),
            pipelineId: "",
            vector: create(VectorConfigSchema, {
              physicalName: "vc_4567",
              dimensions: 8,
              sparseMode: SparseMode.BM25,
              embeddingType: EmbeddingType.INT8,
            }),
          },
        ];
      },
    });
    expect(await directory.list("org", "bucket")).toEqual([
      {
        name: "docs",
        storeEntityId: "d-1",
        pipelineId: "p-1",
        physicalName: "vc_0123",
        dimensions: 768,
        embedModel: "nomic-embed-text-v1.5",
        modality: "text",
        sparseMode: "none",
        embeddingType: "EMBEDDING_TYPE_FLOAT",
      },
      expect.objectContaining({ name: "hybrid", sparseMode: "bm25", embeddingType: "EMBEDDING_TYPE_INT8" }),
    ]);
    expect(asked).toEqual(["org/bucket"]);
  });
});
