import { and, asc, count, eq, gt, inArray, isNull, min, or, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { pipelineDestinations, pipelinePipelines, type StoredFacet } from "./pipeline-schema.js";

export type DestinationRow = typeof pipelineDestinations.$inferSelect;
export type PipelineRecord = typeof pipelinePipelines.$inferSelect;

/** A pipeline row with the destination it is bound to (undefined for a free pipeline). */
export interface PipelineRow extends PipelineRecord {
  readonly destination: DestinationRow | undefined;
}

export interface NewDestination {
  readonly bucket: string;
  readonly facet: StoredFacet;
  readonly name: string;
  readonly description: string;
  readonly engineId?: string;
  readonly config: unknown;
}

export interface NewPipeline {
  readonly bucket: string;
  readonly name: string;
  readonly scriptTemplate: string;
  readonly options: unknown;
  readonly destinationId: string | undefined;
}

export interface PipelineFilter {
  readonly facet?: StoredFacet | undefined;
  readonly destinationId?: string | undefined;
  readonly freeOnly?: boolean;
  /** Keyset position: rows after this (createdAt, id). */
  readonly after?: { readonly createdAt: number; readonly id: string } | undefined;
  /** At most this many rows; every matching row when absent. */
  readonly limit?: number | undefined;
}

/** The queries of the pipeline catalog, each scoped to an organization and a bucket. */
export interface PipelineStore {
  insertDestination(orgId: string, row: NewDestination): Promise<DestinationRow>;
  insertPipeline(orgId: string, row: NewPipeline): Promise<PipelineRow>;
  getPipeline(orgId: string, bucket: string, id: string): Promise<PipelineRow | undefined>;
  listPipelines(orgId: string, bucket: string, filter: PipelineFilter): Promise<PipelineRow[]>;
  getDestination(orgId: string, bucket: string, id: string): Promise<DestinationRow | undefined>;
  listDestinations(orgId: string, bucket: string, facet: StoredFacet): Promise<DestinationRow[]>;
  /** The destination of that facet and name, or undefined. */
  findDestination(orgId: string, bucket: string, facet: StoredFacet, name: string): Promise<DestinationRow | undefined>;
  updatePipeline(
    orgId: string,
    bucket: string,
    id: string,
    changes: { name?: string; options?: unknown },
  ): Promise<boolean>;
  updateDestination(
    orgId: string,
    bucket: string,
    id: string,
    changes: { name?: string; description?: string; config?: unknown },
  ): Promise<boolean>;
  deletePipeline(orgId: string, bucket: string, id: string): Promise<boolean>;
  deleteDestination(orgId: string, bucket: string, id: string): Promise<boolean>;
  /** How many table destinations the bucket has, and when the first was made. */
  tableSummary(orgId: string, bucket: string): Promise<{ count: number; firstCreatedAt: number }>;
}

/** Queries on the pipeline tables. Pass a transaction to join one. */
export function createPipelineStore(db: Database): PipelineStore {
  const pipelineIn = (orgId: string, bucket: string, id: string) =>
    and(eq(pipelinePipelines.orgId, orgId), eq(pipelinePipelines.bucket, bucket), eq(pipelinePipelines.id, id));
  const destinationIn = (orgId: string, bucket: string, id: string) =>
    and(
      eq(pipelineDestinations.orgId, orgId),
      eq(pipelineDestinations.bucket, bucket),
      eq(pipelineDestinations.id, id),
    );

  const selectJoined = (where: SQL | undefined, limit?: number) => {
    const query = db
      .select({ pipeline: pipelinePipelines, destination: pipelineDestinations })
      .from(pipelinePipelines)
      .leftJoin(pipelineDestinations, eq(pipelineDestinations.id, pipelinePipelines.destinationId))
      .where(where)
      .orderBy(asc(pipelinePipelines.createdAt), asc(pipelinePipelines.id));
    return (limit !== undefined ? query.limit(limit) : query).then((rows) =>
      rows.map(({ pipeline, destination }) => ({ ...pipeline, destination: destination ?? undefined })),
    );
  };

  return {
    async insertDestination(orgId, row) {
      const [inserted] = await db
        .insert(pipelineDestinations)
        .values({ orgId, ...row })
        .returning();
      return inserted!;
    },

    async insertPipeline(orgId, row) {
      const [inserted] = await db
        .insert(pipelinePipelines)
        .values({ orgId, ...row })
        .returning();
      const destination = row.destinationId
        ? await this.getDestination(orgId, row.bucket, row.destinationId)
        : undefined;
      return { ...inserted!, destination };
    },

    async getPipeline(orgId, bucket, id) {
      const [row] = await selectJoined(pipelineIn(orgId, bucket, id));
      return row;
    },

    listPipelines(orgId, bucket, filter) {
      const conditions: (SQL | undefined)[] = [
        eq(pipelinePipelines.orgId, orgId),
        eq(pipelinePipelines.bucket, bucket),
      ];
      if (filter.facet) conditions.push(eq(pipelineDestinations.facet, filter.facet));
      if (filter.destinationId) conditions.push(eq(pipelinePipelines.destinationId, filter.destinationId));
      if (filter.freeOnly) conditions.push(isNull(pipelinePipelines.destinationId));
      if (filter.after) {
        const { createdAt, id } = filter.after;
        conditions.push(
          or(
            gt(pipelinePipelines.createdAt, createdAt),
            and(eq(pipelinePipelines.createdAt, createdAt), gt(pipelinePipelines.id, id)),
          ),
        );
      }
      return selectJoined(and(...conditions), filter.limit);
    },

    async getDestination(orgId, bucket, id) {
      const [row] = await db
        .select()
        .from(pipelineDestinations)
        .where(destinationIn(orgId, bucket, id));
      return row;
    },

    listDestinations(orgId, bucket, facet) {
      return db
        .select()
        .from(pipelineDestinations)
        .where(
          and(
            eq(pipelineDestinations.orgId, orgId),
            eq(pipelineDestinations.bucket, bucket),
            eq(pipelineDestinations.facet, facet),
          ),
        )
        .orderBy(asc(pipelineDestinations.createdAt), asc(pipelineDestinations.id));
    },

    async findDestination(orgId, bucket, facet, name) {
      const [row] = await db
        .select()
        .from(pipelineDestinations)
        .where(
          and(
            eq(pipelineDestinations.orgId, orgId),
            eq(pipelineDestinations.bucket, bucket),
            eq(pipelineDestinations.facet, facet),
            eq(pipelineDestinations.name, name),
          ),
        );
      return row;
    },

    async updatePipeline(orgId, bucket, id, changes) {
      const rows = await db
        .update(pipelinePipelines)
        .set({ ...changes, updatedAt: sql`greatest(${nowSql}, ${pipelinePipelines.updatedAt} + 1)` })
        .where(pipelineIn(orgId, bucket, id))
        .returning({ id: pipelinePipelines.id });
      return rows.length > 0;
    },

    async updateDestination(orgId, bucket, id, changes) {
      const rows = await db
        .update(pipelineDestinations)
        .set({ ...changes, updatedAt: sql`greatest(${nowSql}, ${pipelineDestinations.updatedAt} + 1)` })
        .where(destinationIn(orgId, bucket, id))
        .returning({ id: pipelineDestinations.id });
      return rows.length > 0;
    },

    async deletePipeline(orgId, bucket, id) {
      const rows = await db
        .delete(pipelinePipelines)
        .where(pipelineIn(orgId, bucket, id))
        .returning({ id: pipelinePipelines.id });
      return rows.length > 0;
    },

    async deleteDestination(orgId, bucket, id) {
      const rows = await db
        .delete(pipelineDestinations)
        .where(destinationIn(orgId, bucket, id))
        .returning({ id: pipelineDestinations.id });
      return rows.length > 0;
    },

    async tableSummary(orgId, bucket) {
      const [row] = await db
        .select({ count: count(), first: min(pipelineDestinations.createdAt) })
        .from(pipelineDestinations)
        .where(
          and(
            eq(pipelineDestinations.orgId, orgId),
            eq(pipelineDestinations.bucket, bucket),
            inArray(pipelineDestinations.facet, ["table"]),
          ),
        );
      return { count: Number(row?.count ?? 0), firstCreatedAt: Number(row?.first ?? 0) };
    },
  };
}

const nowSql = sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`;
