import { Code, ConnectError } from "@connectrpc/connect";
import type { Database } from "../../db/database.js";
import type { SecretBox } from "../../crypto/secret-box.js";
import { and, eq } from "drizzle-orm";
import { identityUsers, type UserStoreDescription } from "./identity-schema.js";
import type { PoolRef } from "./pool-store.js";
import { connectPostgresUserStore, ensureUserStoreSchema, type UserStoreConnection } from "./postgres-user-store.js";
import { createManagedUserStore, type UserStore } from "./user-store.js";
import { deferredUserStore } from "./deferred-user-store.js";

/** A store as recorded: its description and its sealed URL (null for the managed store). */
export interface StoredUserStore {
  readonly description: UserStoreDescription;
  readonly sealedUrl: Uint8Array | null;
}

/**
 * Where pools' users live: the platform database, or a pool's own PostgreSQL database reached
 * through one shared connection pool per URL, its table created on first use. K3 addresses are
 * recorded as the specification describes, but this server has no K3 client: a pool pointed at
 * one answers FAILED_PRECONDITION on every user operation instead of silently using another store.
 */
export interface UserStoreDirectory {
  /** The database holding the pool's `identity_users` rows, with the table in place. */
  database(pool: PoolRef, store: StoredUserStore): Promise<Database>;
  users(pool: PoolRef, store: StoredUserStore): UserStore;
  /**
   * Erases the pool's users from a store of its own (a pool deleted with `wipeBucketData`). The
   * managed store's rows go with the pool anyway; a K3 store is not reached by this server.
   */
  erase(pool: PoolRef, store: StoredUserStore): Promise<void>;
  seal(pool: PoolRef, url: string): Uint8Array;
  close(): Promise<void>;
}

export interface UserStoreDirectoryOptions {
  readonly now?: () => number;
  /** How a `postgres://` URL is reached; tests hand in other databases. */
  readonly connect?: (url: string) => UserStoreConnection;
}

// One context for every slot the URL is sealed in (the pool's store, a migration's source or
// target), so cutover can move the sealed bytes from one column to another as they are.
const sealContext = (pool: PoolRef) => `identity-user-store:${pool.orgId}:${pool.poolId}`;

export function createUserStoreDirectory(
  platformDb: Database,
  box: SecretBox,
  options: UserStoreDirectoryOptions = {},
): UserStoreDirectory {
  const connect = options.connect ?? connectPostgresUserStore;
  const open = new Map<string, { connection: UserStoreConnection; ready: Promise<void> }>();

  function reach(url: string): Promise<Database> {
    let entry = open.get(url);
    if (!entry) {
      const connection = connect(url);
      entry = { connection, ready: ensureUserStoreSchema(connection.db) };
      open.set(url, entry);
      // A failed first contact is retried by the next request instead of being remembered.
      entry.ready.catch(() => open.get(url) === entry && open.delete(url));
    }
    const { connection, ready } = entry;
    return ready.then(() => connection.db);
  }

  async function database(pool: PoolRef, store: StoredUserStore): Promise<Database> {
    switch (store.description.kind) {
      case "managed":
        return platformDb;
      case "postgres": {
        if (!store.sealedUrl)
          throw new ConnectError("the pool's postgres user store has no recorded address", Code.FailedPrecondition);
        return reach(Buffer.from(box.open(store.sealedUrl, sealContext(pool))).toString("utf8"));
      }
      default:
        throw new ConnectError(
          `the pool's ${store.description.kind} user store is recorded but not served by this server; point the pool at the managed store or a postgres:// database`,
          Code.FailedPrecondition,
        );
    }
  }

  return {
    database,
    users(pool, store) {
      if (store.description.kind === "managed") return createManagedUserStore(platformDb, pool, { now: options.now });
      return deferredUserStore(async () =>
        createManagedUserStore(platformDb, pool, { now: options.now, usersDb: await database(pool, store) }),
      );
    },
    async erase(pool, store) {
      if (store.description.kind !== "postgres") return;
      const db = await database(pool, store);
      await db
        .delete(identityUsers)
        .where(and(eq(identityUsers.orgId, pool.orgId), eq(identityUsers.poolId, pool.poolId)));
    },
    seal: (pool, url) => box.seal(Buffer.from(url, "utf8"), sealContext(pool)),
    async close() {
      const entries = [...open.values()];
      open.clear();
      await Promise.allSettled(entries.map((entry) => entry.connection.close()));
    },
  };
}
