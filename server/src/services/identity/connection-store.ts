import { Code, ConnectError } from "@connectrpc/connect";
import { and, asc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { identityConnections, type JsonObject } from "./identity-schema.js";
import type { PoolRef } from "./pool-store.js";

export type ConnectionRecord = typeof identityConnections.$inferSelect;

/** The kinds that offer a sign-in method; other kinds are stored and listed but sign nobody in. */
export const IMPLEMENTED_CONNECTION_KINDS: ReadonlySet<string> = new Set(["local"]);

const KIND = /^[a-z][a-z0-9_-]{0,31}$/;

export interface ConnectionStore {
  /** Creates the pool's connection of that kind or replaces its configuration and switch. */
  upsert(
    pool: PoolRef,
    input: { readonly kind: string; readonly config: JsonObject; readonly enabled: boolean },
  ): Promise<ConnectionRecord>;
  get(pool: PoolRef, kind: string): Promise<ConnectionRecord | undefined>;
  list(pool: PoolRef): Promise<ConnectionRecord[]>;
  delete(pool: PoolRef, kind: string): Promise<boolean>;
}

/** Whether a connection offers sign-in now. A pool without a `local` row signs in with e-mail and password. */
export function connectionActive(connection: Pick<ConnectionRecord, "kind" | "enabled">): boolean {
  return connection.enabled && IMPLEMENTED_CONNECTION_KINDS.has(connection.kind);
}

export function createConnectionStore(db: Database): ConnectionStore {
  const scoped = (pool: PoolRef) =>
    and(eq(identityConnections.orgId, pool.orgId), eq(identityConnections.poolId, pool.poolId));

  return {
    async upsert(pool, input) {
      if (!KIND.test(input.kind)) {
        throw new ConnectError(
          `kind must be a lower-case letter then up to 31 of a-z, 0-9, _ and -, got ${JSON.stringify(input.kind)}`,
          Code.InvalidArgument,
        );
      }
      const [row] = await db
        .insert(identityConnections)
        .values({ ...pool, kind: input.kind, config: input.config, enabled: input.enabled })
        .onConflictDoUpdate({
          target: [identityConnections.poolId, identityConnections.kind],
          set: {
            config: sql`excluded.config`,
            enabled: sql`excluded.enabled`,
            updatedAt: sql`greatest(excluded.updated_at, ${identityConnections.updatedAt} + 1)`,
          },
        })
        .returning();
      return row!;
    },

    async get(pool, kind) {
      const [row] = await db
        .select()
        .from(identityConnections)
        .where(and(scoped(pool), eq(identityConnections.kind, kind)));
      return row;
    },

    list: (pool) => db.select().from(identityConnections).where(scoped(pool)).orderBy(asc(identityConnections.kind)),

    async delete(pool, kind) {
      const rows = await db
        .delete(identityConnections)
        .where(and(scoped(pool), eq(identityConnections.kind, kind)))
        .returning({ kind: identityConnections.kind });
      return rows.length > 0;
    },
  };
}
