import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { VectorDataServiceImplementation } from "../../../../../gen/platform/data/vector/v1/vector_data_service_server.js";
import { principalOf } from "../../../auth/principal.js";
import type { BucketDirectory } from "../collection-directory.js";
import type { SqlExecutor } from "../engine/sql-executor.js";
import { PlainVectorTable, type VectorTableInfo } from "./plain-vector-table.js";
import { DEFAULT_TOP_K, MAX_DELETE_IDS, MAX_TOP_K } from "./vector-limits.js";
import { metricSql } from "./vector-metric.js";
import { checkId } from "./vector-records.js";
import { vectorTableName } from "./vector-table-name.js";

export interface VectorDataServiceOptions {
  /** Bucket existence in the caller's organization; an unknown bucket is NOT_FOUND. */
  readonly buckets: BucketDirectory;
  /**
   * The executor on the bucket's engine database (VectorService's engineDatabase): a bucket
   * without an engine gets an implicit auto engine, provisioned before this resolves.
   */
  engineDatabase(orgId: string, bucket: string): Promise<{ readonly executor: SqlExecutor }>;
}

/**
 * The data-plane vector API: caller-supplied embeddings in plain vector tables of the bucket's
 * engine database, the same tables a SQL client sees there.
 */
export function createVectorDataService(options: VectorDataServiceOptions): VectorDataServiceImplementation {
  /** The table of a request, after the name and the bucket's tenancy are checked (in that order: no database work for a bad name). */
  async function tableOf(request: { bucket: string; table: string }, context: HandlerContext) {
    const { orgId } = principalOf(context);
    if (request.bucket === "") throw new ConnectError("bucket is required", Code.InvalidArgument);
    vectorTableName(request.table);
    if (!(await options.buckets.exists(orgId, request.bucket)))
      throw new ConnectError(`bucket ${request.bucket} not found`, Code.NotFound);
    const { executor } = await options.engineDatabase(orgId, request.bucket);
    return new PlainVectorTable(executor, request.table);
  }

  const tableMessage = (table: string, info: VectorTableInfo) => ({
    table,
    dimension: info.dimension,
    vectorCount: info.count,
    indexedMetrics: info.indexedMetrics,
  });

  return {
    async upsertVectors(request, context) {
      const table = await tableOf(request, context);
      const result = await table.upsert(request.vectors);
      return { upsertedCount: result.count, dimension: result.dimension, tableCreated: result.created };
    },

    async queryVectors(request, context) {
      const metric = metricSql(request.metric);
      const topK = request.topK === 0 ? DEFAULT_TOP_K : request.topK;
      if (topK < 1 || topK > MAX_TOP_K)
        throw new ConnectError(`topK must be between 1 and ${MAX_TOP_K}, got ${request.topK}`, Code.InvalidArgument);
      if (request.vector.length === 0) throw new ConnectError("vector is required", Code.InvalidArgument);
      const table = await tableOf(request, context);
      const matches = await table.query({
        vector: request.vector,
        topK,
        metric,
        includeMetadata: request.includeMetadata,
        includeValues: request.includeValues,
      });
      return {
        matches: matches.map((match) => ({
          id: match.id,
          score: match.score,
          metadata: match.metadata,
          values: match.values ?? [],
        })),
        metric: metric.metric,
      };
    },

    async deleteVectors(request, context) {
      const hasIds = request.ids.length > 0;
      if (hasIds === request.all)
        throw new ConnectError(
          hasIds
            ? "ids and all are exclusive: give one of them"
            : "ids is required, or all: true to delete every vector",
          Code.InvalidArgument,
        );
      if (request.ids.length > MAX_DELETE_IDS)
        throw new ConnectError(
          `ids holds ${request.ids.length} ids; at most ${MAX_DELETE_IDS} may be deleted at once`,
          Code.InvalidArgument,
        );
      request.ids.forEach((id, index) => checkId(id, `ids[${index}]`));
      const table = await tableOf(request, context);
      const deletedCount = await table.delete(hasIds ? { ids: request.ids } : { all: true });
      return { deletedCount };
    },

    async describeVectorTable(request, context) {
      const table = await tableOf(request, context);
      return tableMessage(request.table, await table.describe());
    },

    async createVectorIndex(request, context) {
      const metric = metricSql(request.metric);
      const table = await tableOf(request, context);
      return tableMessage(request.table, await table.createIndex(metric));
    },
  };
}
