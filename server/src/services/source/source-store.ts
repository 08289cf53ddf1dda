import { isUniqueViolation } from "../../db/sql-state.js";
import type { JsonObject } from "@bufbuild/protobuf";
import { and, asc, eq, gt, or, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { sources, type ProviderName } from "./source-schema.js";

export type SourceRow = typeof sources.$inferSelect;

export interface SourceInsert {
  readonly bucket: string;
  readonly name: string;
  readonly description: string;
  readonly provider: ProviderName;
  readonly credentialId: string | null;
  readonly config: JsonObject;
}

export interface SourceChanges {
  readonly name?: string;
  readonly description?: string;
  readonly credentialId?: string | null;
  readonly config?: JsonObject;
}

/** Keyset position of a listing: the internal source first, then by creation time and id. */
export interface SourcePosition {
  readonly internal: boolean;
  readonly createdAt: number;
  readonly id: string;
}

export interface SourceStore {
  /** The new row, or undefined when the name is taken in the bucket. */
  insert(orgId: string, source: SourceInsert): Promise<SourceRow | undefined>;
  /** Creates the bucket's internal source unless it exists; answers it either way. */
  ensureInternal(orgId: string, bucket: string): Promise<SourceRow>;
  get(orgId: string, bucket: string, id: string): Promise<SourceRow | undefined>;
  /** Any bucket: for credentials stored for a source. */
  getAnyBucket(orgId: string, id: string): Promise<SourceRow | undefined>;
  list(orgId: string, bucket: string, page: { after?: SourcePosition; limit?: number }): Promise<SourceRow[]>;
  /** The changed row; undefined when it does not exist; `taken` when the new name is in use. */
  update(orgId: string, bucket: string, id: string, changes: SourceChanges): Promise<SourceRow | "taken" | undefined>;
  /** Deletes an external source; answers whether one was deleted. */
  delete(orgId: string, bucket: string, id: string): Promise<boolean>;
  /** Deletes every source of a bucket, the internal one included (the bucket is gone). */
  deleteBucket(orgId: string, bucket: string): Promise<number>;
  /** Records what the last discovery or sync found: undefined for success, else the reason. */
  setHealth(orgId: string, id: string, error: string | undefined): Promise<void>;
}

/** The name of every bucket's internal source, reserved: no external source may take it. */
export const INTERNAL_SOURCE_NAME = "internal";

/** Queries on `source_sources`, each scoped to an organization. Pass a transaction to join one. */
export function createSourceStore(db: Database): SourceStore {
  const row = (orgId: string, bucket: string, id: string) =>
    and(eq(sources.orgId, orgId), eq(sources.bucket, bucket), eq(sources.id, id));

  return {
    async insert(orgId, source) {
      try {
        const [created] = await db
          .insert(sources)
          .values({ orgId, ...source })
          .returning();
        return created;
      } catch (error) {
        if (isUniqueViolation(error)) return undefined;
        throw error;
      }
    },

    async ensureInternal(orgId, bucket) {
      // The partial unique index makes concurrent calls for one bucket create a single row.
      await db
        .insert(sources)
        .values({ orgId, bucket, name: INTERNAL_SOURCE_NAME, provider: "internal", internal: true })
        .onConflictDoNothing();
      const [existing] = await db
        .select()
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.bucket, bucket), eq(sources.internal, true)));
      return existing!;
    },

    async get(orgId, bucket, id) {
      const [found] = await db
        .select()
        .from(sources)
        .where(row(orgId, bucket, id));
      return found;
    },

    async getAnyBucket(orgId, id) {
      const [found] = await db
        .select()
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.id, id)));
      return found;
    },

    async list(orgId, bucket, { after, limit }) {
      // `not internal` sorts the internal source (false) first.
      const notInternal = sql<boolean>`not ${sources.internal}`;
      // One internal source per bucket: past it come all external ones, past an external one the later ones.
      const position = after
        ? and(
            eq(sources.internal, false),
            after.internal
              ? undefined
              : or(
                  gt(sources.createdAt, after.createdAt),
                  and(eq(sources.createdAt, after.createdAt), gt(sources.id, after.id)),
                ),
          )
        : undefined;
      const query = db
        .select()
        .from(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.bucket, bucket), position))
        .orderBy(asc(notInternal), asc(sources.createdAt), asc(sources.id));
      return limit === undefined ? query : query.limit(limit);
    },

    async update(orgId, bucket, id, changes) {
      try {
        const [updated] = await db
          .update(sources)
          .set({ ...changes, updatedAt: sql`greatest(${nowSql}, ${sources.updatedAt} + 1)` })
          .where(and(row(orgId, bucket, id), eq(sources.internal, false)))
          .returning();
        return updated;
      } catch (error) {
        if (isUniqueViolation(error)) return "taken";
        throw error;
      }
    },

    async delete(orgId, bucket, id) {
      const removed = await db
        .delete(sources)
        .where(and(row(orgId, bucket, id), eq(sources.internal, false)))
        .returning({ id: sources.id });
      return removed.length > 0;
    },

    async deleteBucket(orgId, bucket) {
      const removed = await db
        .delete(sources)
        .where(and(eq(sources.orgId, orgId), eq(sources.bucket, bucket)))
        .returning({ id: sources.id });
      return removed.length;
    },

    async setHealth(orgId, id, error) {
      await db
        .update(sources)
        .set({ status: error === undefined ? "active" : "error", errorMessage: error ?? "" })
        .where(and(eq(sources.orgId, orgId), eq(sources.id, id)));
    },
  };
}

/** The database clock, shared by every replica. */
const nowSql = sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`;
