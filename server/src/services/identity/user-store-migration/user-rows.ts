import { createHash } from "node:crypto";
import { and, asc, count, eq, gt, gte, inArray, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { identityUsers } from "../identity-schema.js";
import type { PoolRef } from "../pool-store.js";

/** A user row as stored, hash and times included: what a migration copies and compares. */
export type UserRow = typeof identityUsers.$inferSelect;

/**
 * One pool's rows in one `identity_users` table (the platform's or a pool database's), read and
 * written whole. Ids are copied as they are, so sessions, memberships and codes, which stay in the
 * platform database keyed by user id, keep pointing at the same users after a move.
 */
export interface UserRows {
  /** The database's clock in epoch ms, the clock `updated_at` is written with. */
  clock(): Promise<number>;
  count(): Promise<number>;
  /** Rows with an id above `afterId` ("" for the first), in id order. */
  after(afterId: string, limit: number): Promise<UserRow[]>;
  changedSince(watermark: number): Promise<UserRow[]>;
  ids(): Promise<string[]>;
  /** Inserts rows not there yet; answers how many went in. */
  insert(rows: readonly UserRow[]): Promise<number>;
  deleteIds(ids: readonly string[]): Promise<void>;
  /** Deletes up to `limit` rows; answers how many. */
  deleteSome(limit: number): Promise<number>;
  /** Runs `work` in one transaction on this table's database. */
  transaction<T>(work: (rows: UserRows) => Promise<T>): Promise<T>;
}

const ID_CHUNK = 1000;

export function userRows(db: Database, pool: PoolRef): UserRows {
  const inPool = and(eq(identityUsers.orgId, pool.orgId), eq(identityUsers.poolId, pool.poolId));
  return {
    async clock() {
      const [row] = await db
        .select({ ms: sql<string>`(extract(epoch from clock_timestamp()) * 1000)::bigint` })
        .from(sql`(select 1) as one`);
      return Number(row!.ms);
    },
    async count() {
      const [row] = await db.select({ n: count() }).from(identityUsers).where(inPool);
      return row!.n;
    },
    after: (afterId, limit) =>
      db
        .select()
        .from(identityUsers)
        .where(afterId ? and(inPool, gt(identityUsers.id, afterId)) : inPool)
        .orderBy(asc(identityUsers.id))
        .limit(limit),
    changedSince: (watermark) =>
      db
        .select()
        .from(identityUsers)
        .where(and(inPool, gte(identityUsers.updatedAt, watermark))),
    async ids() {
      const rows = await db.select({ id: identityUsers.id }).from(identityUsers).where(inPool);
      return rows.map((row) => row.id);
    },
    async insert(rows) {
      if (rows.length === 0) return 0;
      // Without a conflict target: neither an id already copied nor an address a stale row still
      // holds stops the batch; what is skipped changed during the copy and is copied while locked.
      const inserted = await db
        .insert(identityUsers)
        .values([...rows])
        .onConflictDoNothing()
        .returning({ id: identityUsers.id });
      return inserted.length;
    },
    async deleteIds(ids) {
      for (let i = 0; i < ids.length; i += ID_CHUNK) {
        await db.delete(identityUsers).where(and(inPool, inArray(identityUsers.id, ids.slice(i, i + ID_CHUNK))));
      }
    },
    async deleteSome(limit) {
      const doomed = db.select({ id: identityUsers.id }).from(identityUsers).where(inPool).limit(limit);
      const deleted = await db
        .delete(identityUsers)
        .where(and(inPool, inArray(identityUsers.id, doomed)))
        .returning({ id: identityUsers.id });
      return deleted.length;
    },
    transaction: (work) => db.transaction((tx) => work(userRows(tx, pool))),
  };
}

/** A row's fingerprint over every stored column: equal fingerprints, equal rows. */
export function rowChecksum(row: UserRow): string {
  const canonical = [
    row.id,
    row.orgId,
    row.poolId,
    row.email,
    row.emailNormalized,
    row.emailVerified,
    row.passwordHash,
    row.appRoles,
    row.banned,
    row.deletedAt,
    row.createdAt,
    row.updatedAt,
  ];
  return createHash("sha256").update(JSON.stringify(canonical)).digest("base64url");
}
