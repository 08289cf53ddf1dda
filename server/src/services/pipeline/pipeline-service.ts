import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Destination, Pipeline, VectorConfig } from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import {
  ListPipelinesResponseSchema,
  PaginationSchema,
  TableReservationSchema,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { PipelineServiceImplementation } from "../../../../gen/platform/data/pipeline/v1/pipeline_service_server.js";
import { createArtifactDeleter } from "./artifact-deleter.js";
import { createPipelineDeps, type PipelineServiceOptions } from "./pipeline-context.js";
import { createPipelineCreators } from "./pipeline-creators.js";
import { notFound, parseFacet, requireUuid, toDestination, toPipeline, vectorConfigOf } from "./pipeline-messages.js";
import { createTemplateBrowser } from "./pipeline-templates.js";
import { createPipelineUpdater } from "./pipeline-updater.js";

export type { BucketDirectory, DestinationData, PipelineServiceOptions, RuleArtifacts } from "./pipeline-context.js";

/** Default and largest gRPC page of ListPipelines (HTTP answers every row, unpaged). */
const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

/** A vector collection as the engine and ingestion read it: the destination and its config. */
export interface VectorCollection {
  readonly destination: Destination;
  readonly vector: VectorConfig;
  /** The collection's index pipeline; empty when it has none (its pipeline was deleted). */
  readonly pipelineId: string;
}

/**
 * What the vector engine and ingestion read from the catalog, in-process, without going through
 * the RPC surface (they act for an organization already authenticated):
 *
 * - `listVectorCollections(orgId, bucket)`: every vector destination of a bucket with its
 *   VectorConfig (physical name, model, dimensions...), oldest first: the collections search
 *   fans out to and the engine lists.
 * - `getPipeline(orgId, bucket, pipelineId)`: one pipeline with its destination, undefined when it
 *   does not exist in that organization and bucket (or the id is not a UUID): what an ingest rule
 *   resolves its pipeline with.
 */
export interface PipelineCatalogReader {
  listVectorCollections(orgId: string, bucket: string): Promise<VectorCollection[]>;
  getPipeline(orgId: string, bucket: string, pipelineId: string): Promise<Pipeline | undefined>;
}

export interface PipelineServiceParts {
  /** The RPC implementation, for registerPipelineService. */
  readonly service: PipelineServiceImplementation;
  readonly catalog: PipelineCatalogReader;
}

/**
 * The pipeline catalog service: pipelines and destinations, per organization and bucket. Its
 * dependencies are small on purpose: the script service's template methods (through their
 * generated interface), a bucket directory (`exists`), and the ingest service's rule deletion for
 * teardowns (optional until that service exists).
 */
export function createPipelineService(options: PipelineServiceOptions): PipelineServiceParts {
  const deps = createPipelineDeps(options);
  const creators = createPipelineCreators(deps);
  const updater = createPipelineUpdater(deps);
  const deleter = createArtifactDeleter(deps);
  const browser = createTemplateBrowser(options.templates);
  const { store } = deps;

  const service: PipelineServiceImplementation = {
    ...creators,
    ...browser,
    updatePipeline: updater.updatePipeline,
    batchDeleteArtifacts: deleter.batchDeleteArtifacts,

    async listPipelines(request, context) {
      const scope = await deps.scope(request.bucket, context);
      const facet = parseFacet(request.facet);
      const destinationId =
        request.storeEntityId === "" ? undefined : requireUuid(request.storeEntityId, "store_entity_id");
      // Paging only when asked for (gRPC): the HTTP route never reads page_size or page_token, so
      // it answers every row with pagination left null.
      const paged = request.pageSize > 0 || request.pageToken !== "";
      if (request.pageSize < 0) throw new ConnectError("page_size: must not be negative", Code.InvalidArgument);
      const limit = Math.min(request.pageSize || DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const rows = await store.listPipelines(scope.orgId, scope.bucket, {
        facet,
        destinationId,
        freeOnly: request.freeOnly,
        after: paged ? parsePageToken(request.pageToken) : undefined,
        limit: paged ? limit + 1 : undefined,
      });
      const page = paged ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return create(ListPipelinesResponseSchema, {
        pipelines: page.map(toPipeline),
        pagination: paged
          ? create(PaginationSchema, {
              nextPageToken: rows.length > limit && last ? `${last.createdAt}_${last.id}` : "",
            })
          : undefined,
      });
    },

    async getPipeline(request, context) {
      const scope = await deps.scope(request.bucket, context);
      const id = requireUuid(request.pipelineId, "pipeline_id");
      const row = await store.getPipeline(scope.orgId, scope.bucket, id);
      if (!row) throw notFound(`pipeline "${id}"`);
      return toPipeline(row);
    },

    async deletePipeline(request, context) {
      const scope = await deps.scope(request.bucket, context);
      const id = requireUuid(request.pipelineId, "pipeline_id");
      if (!(await store.deletePipeline(scope.orgId, scope.bucket, id))) throw notFound(`pipeline "${id}"`);
      return {};
    },

    async getTableReservation(request, context) {
      const scope = await deps.scope(request.bucket, context);
      const summary = await store.tableSummary(scope.orgId, scope.bucket);
      return create(TableReservationSchema, {
        bucket: scope.bucket,
        schemaName: `tables_${scope.bucket.replace(/[^A-Za-z0-9_]/g, "_")}`,
        tableCount: summary.count,
        createdAt: BigInt(summary.firstCreatedAt),
      });
    },
  };

  const catalog: PipelineCatalogReader = {
    async listVectorCollections(orgId, bucket) {
      const [rows, pipelines] = await Promise.all([
        store.listDestinations(orgId, bucket, "vector"),
        store.listPipelines(orgId, bucket, { facet: "vector" }),
      ]);
      // The index pipeline of a destination: the one bound to it that is not its `*_search` pair.
      const indexOf = (destinationId: string) =>
        pipelines.find((p) => p.destinationId === destinationId && !p.scriptTemplate.endsWith("_search"));
      return rows.map((row) => ({
        destination: toDestination(row),
        vector: vectorConfigOf(row),
        pipelineId: indexOf(row.id)?.id ?? "",
      }));
    },
    async getPipeline(orgId, bucket, pipelineId) {
      let id: string;
      try {
        id = requireUuid(pipelineId, "pipeline_id");
      } catch {
        return undefined;
      }
      const row = await store.getPipeline(orgId, bucket, id);
      return row ? toPipeline(row) : undefined;
    },
  };

  return { service, catalog };
}

/** The keyset position in a handler's own page token (`<createdAt>_<id>`); the edge has verified its signature. */
function parsePageToken(token: string): { createdAt: number; id: string } | undefined {
  if (token === "") return undefined;
  const match = /^([0-9]{1,16})_([0-9a-f-]{36})$/.exec(token);
  if (!match) throw new ConnectError("page_token: is not a token of this list", Code.InvalidArgument);
  return { createdAt: Number(match[1]), id: match[2]! };
}
