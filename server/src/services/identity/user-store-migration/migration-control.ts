import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { identityPools, identityUserStoreMigrations } from "../identity-schema.js";
import { poolRefOf, type PoolRecord } from "../pool-store.js";
import type { UserStoreDirectory } from "../user-store-directory.js";
import { parseUserStoreAddress, sameUserStore } from "../user-store-address.js";
import { migrationJobs, ROLLBACK_PHASES } from "./migration-jobs.js";
import { notifyMigrationWorkers } from "./migration-worker.js";
import { userRows } from "./user-rows.js";

export interface MigrationControlDeps {
  readonly db: Database;
  readonly directory: UserStoreDirectory;
  readonly now?: () => number;
}

const running = (record: PoolRecord) => record.migration !== null && record.migration.phase !== "failed";

/**
 * What the admin API does to a pool's user store: re-point it, start a migration, abort one. Each
 * decides on the pool row locked in one transaction, so two administrators (or an administrator
 * and a worker moving a phase on) never both win.
 */
export function migrationControl(deps: MigrationControlDeps) {
  const now = deps.now ?? Date.now;
  const jobs = migrationJobs(deps.db, now);

  async function lockedPool(tx: Database, record: PoolRecord): Promise<PoolRecord> {
    const [row] = await tx.select().from(identityPools).where(eq(identityPools.id, record.id)).for("update");
    if (!row) throw new ConnectError(`pool "${record.name}" not found`, Code.NotFound);
    return row;
  }

  async function jobLeft(tx: Database, record: PoolRecord): Promise<boolean> {
    const rows = await tx
      .select({ state: identityUserStoreMigrations.state })
      .from(identityUserStoreMigrations)
      .where(
        and(eq(identityUserStoreMigrations.orgId, record.orgId), eq(identityUserStoreMigrations.poolId, record.id)),
      );
    return rows.length > 0;
  }

  /** Reaches a postgres:// store (creating its table) before anything points at it. */
  async function reachable(record: PoolRecord, url: string | null, field: string): Promise<Uint8Array | null> {
    if (url === null) return null;
    const ref = poolRefOf(record);
    const sealedUrl = deps.directory.seal(ref, url);
    try {
      await deps.directory.database(ref, { description: { kind: "postgres" }, sealedUrl });
    } catch (error) {
      throw new ConnectError(
        `${field}: the database cannot be used (${error instanceof Error ? error.message : String(error)})`,
        Code.FailedPrecondition,
      );
    }
    return sealedUrl;
  }

  return {
    /** Points the pool at another store without copying; refused while a migration runs. */
    async setUserStore(record: PoolRecord, address: string): Promise<PoolRecord> {
      const target = parseUserStoreAddress("userStore", address);
      const sealedUrl = await reachable(record, target.url, "userStore");
      return deps.db.transaction(async (tx) => {
        const pool = await lockedPool(tx, record);
        if (running(pool) || (await jobLeft(tx, pool)))
          throw new ConnectError("a user-store migration is running; abort it first", Code.FailedPrecondition);
        const [updated] = await tx
          .update(identityPools)
          .set({
            userStore: target.description,
            sealedUserStoreUrl: sealedUrl,
            state: "active",
            migration: null,
            updatedAt: now(),
          })
          .where(eq(identityPools.id, pool.id))
          .returning();
        return updated!;
      });
    },

    async start(
      record: PoolRecord,
      input: { readonly target: string; readonly keepSource?: boolean | undefined },
    ): Promise<PoolRecord> {
      const target = parseUserStoreAddress("target", input.target);
      if (sameUserStore(target.description, record.userStore))
        throw new ConnectError("target is the pool's current user store", Code.InvalidArgument);
      if (target.description.kind === "k3")
        throw new ConnectError(
          "target: k3 user stores are recorded but not served by this server",
          Code.FailedPrecondition,
        );
      if (record.userStore.kind === "k3")
        throw new ConnectError(
          "the pool's k3 user store is not served by this server, so its users cannot be copied",
          Code.FailedPrecondition,
        );
      const sealedTargetUrl = await reachable(record, target.url, "target");
      const ref = poolRefOf(record);
      const source = await deps.directory.database(ref, {
        description: record.userStore,
        sealedUrl: record.sealedUserStoreUrl,
      });
      // The source's own clock: `updated_at` is written by it.
      const watermark = await userRows(source, ref).clock();
      const usersTotal = await userRows(source, ref).count();
      const started = await deps.db.transaction(async (tx) => {
        const pool = await lockedPool(tx, record);
        if (running(pool)) throw new ConnectError("a user-store migration is already running", Code.FailedPrecondition);
        if (await jobLeft(tx, pool))
          throw new ConnectError(
            "the previous migration is still erasing its copy; retry shortly",
            Code.FailedPrecondition,
          );
        if (!sameUserStore(pool.userStore, record.userStore))
          throw new ConnectError("the pool's user store changed meanwhile; retry", Code.FailedPrecondition);
        await tx.insert(identityUserStoreMigrations).values({
          ...ref,
          source: pool.userStore,
          sealedSourceUrl: pool.sealedUserStoreUrl,
          sealedTargetUrl,
          watermark,
        });
        const at = now();
        const [updated] = await tx
          .update(identityPools)
          .set({
            state: "migrating",
            migration: {
              phase: "warm_copy",
              usersTotal,
              usersCopied: 0,
              target: target.description,
              keepSource: input.keepSource ?? false,
              startedAt: at,
              updatedAt: at,
            },
          })
          .where(eq(identityPools.id, pool.id))
          .returning();
        return updated!;
      });
      await notifyMigrationWorkers(deps.db);
      return started;
    },

    /** Rolls back a migration that has not switched the pool yet; the pool is active on its source at once. */
    async abort(record: PoolRecord): Promise<PoolRecord> {
      const aborted = await deps.db.transaction(async (tx) => {
        const pool = await lockedPool(tx, record);
        const phase = pool.migration?.phase;
        if (!phase || !ROLLBACK_PHASES.includes(phase)) {
          throw new ConnectError(
            phase ? `the migration is in ${phase} and can no longer be aborted` : "no user-store migration is running",
            Code.FailedPrecondition,
          );
        }
        await jobs.discard(poolRefOf(pool), tx);
        const [updated] = await tx
          .update(identityPools)
          .set({ state: "active", migration: null })
          .where(eq(identityPools.id, pool.id))
          .returning();
        return updated!;
      });
      await notifyMigrationWorkers(deps.db);
      return aborted;
    },
  };
}

export type MigrationControl = ReturnType<typeof migrationControl>;
