import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { identityPools, type JsonObject } from "./identity-schema.js";
import { parseRoleCatalog } from "./role-catalog.js";
import { checkSlug } from "./slug-rule.js";

/** What every pool-scoped row is addressed by. */
export interface PoolRef {
  readonly orgId: string;
  readonly poolId: string;
}

export type PoolRecord = typeof identityPools.$inferSelect;

/** The admin API's PATCH: absent members stay as they are; `{}` clears a document. */
export interface PoolPatch {
  readonly displayName?: string;
  readonly policies?: JsonObject;
  readonly settings?: JsonObject;
  readonly branding?: JsonObject;
  readonly roleCatalog?: JsonObject;
}

export interface PoolStore {
  /** ALREADY_EXISTS when the organization has a pool of that name. */
  create(orgId: string, input: { readonly name: string; readonly displayName?: string }): Promise<PoolRecord>;
  get(orgId: string, name: string): Promise<PoolRecord | undefined>;
  /** The organization's pools by name. */
  list(orgId: string): Promise<PoolRecord[]>;
  update(orgId: string, name: string, patch: PoolPatch): Promise<PoolRecord | undefined>;
  /** Removes the pool and, by cascade, everything it held. Answers whether it existed. */
  delete(orgId: string, name: string): Promise<boolean>;
}

export const MAX_DISPLAY_NAME = 200;

export function poolRefOf(pool: Pick<PoolRecord, "orgId" | "id">): PoolRef {
  return { orgId: pool.orgId, poolId: pool.id };
}

export function checkDisplayName(field: string, value: string): string {
  if (value.length > MAX_DISPLAY_NAME)
    throw new ConnectError(`${field} is ${value.length} characters; at most ${MAX_DISPLAY_NAME}`, Code.InvalidArgument);
  return value;
}

export function createPoolStore(db: Database): PoolStore {
  const named = (orgId: string, name: string) => and(eq(identityPools.orgId, orgId), eq(identityPools.name, name));

  return {
    async create(orgId, input) {
      checkSlug("name", input.name);
      const [row] = await db
        .insert(identityPools)
        .values({ orgId, name: input.name, displayName: checkDisplayName("displayName", input.displayName ?? "") })
        .onConflictDoNothing()
        .returning();
      if (!row) throw new ConnectError(`a pool named "${input.name}" already exists`, Code.AlreadyExists);
      return row;
    },

    async get(orgId, name) {
      const [row] = await db.select().from(identityPools).where(named(orgId, name));
      return row;
    },

    list: (orgId) =>
      db.select().from(identityPools).where(eq(identityPools.orgId, orgId)).orderBy(asc(identityPools.name)),

    async update(orgId, name, patch) {
      if (patch.displayName !== undefined) checkDisplayName("displayName", patch.displayName);
      // Refused here rather than when a token is minted: a broken catalog must never be stored.
      if (patch.roleCatalog !== undefined) parseRoleCatalog(patch.roleCatalog);
      const [row] = await db
        .update(identityPools)
        .set({
          ...patch,
          updatedAt: sql`greatest((extract(epoch from statement_timestamp()) * 1000)::bigint, ${identityPools.updatedAt} + 1)`,
        })
        .where(named(orgId, name))
        .returning();
      return row;
    },

    async delete(orgId, name) {
      const rows = await db.delete(identityPools).where(named(orgId, name)).returning({ id: identityPools.id });
      return rows.length > 0;
    },
  };
}
