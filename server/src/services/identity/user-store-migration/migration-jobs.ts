import { and, asc, eq, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import {
  identityPools,
  identityUserStoreMigrations,
  type MigrationPhase,
  type PoolMigration,
} from "../identity-schema.js";
import type { PoolRecord, PoolRef } from "../pool-store.js";

export type MigrationJob = typeof identityUserStoreMigrations.$inferSelect;
type PoolUpdate = Partial<typeof identityPools.$inferInsert>;

/** The phases in which the pool still serves from its source and an abort can roll back. */
export const ROLLBACK_PHASES: readonly MigrationPhase[] = ["warm_copy", "locked_delta", "verifying"];

const poolOf = (ref: PoolRef) => and(eq(identityPools.orgId, ref.orgId), eq(identityPools.id, ref.poolId));
const jobOf = (ref: PoolRef) =>
  and(eq(identityUserStoreMigrations.orgId, ref.orgId), eq(identityUserStoreMigrations.poolId, ref.poolId));

/**
 * The job table seen by the workers: who holds which job (a lease, renewed while working, taken
 * over when it lapses, as after a crash) and the pool's migration record moved phase by phase. Every
 * phase change names the phase it leaves, so two processes can never both make the same move.
 */
export function migrationJobs(db: Database, now: () => number) {
  const jobs = {
    /** A job nobody holds (or this owner already holds), leased to `owner` for `leaseMs`. */
    async claim(owner: string, leaseMs: number): Promise<MigrationJob | undefined> {
      return db.transaction(async (tx) => {
        const [free] = await tx
          .select({ poolId: identityUserStoreMigrations.poolId })
          .from(identityUserStoreMigrations)
          .where(
            or(
              lt(identityUserStoreMigrations.leaseExpiresAt, now()),
              eq(identityUserStoreMigrations.leaseOwner, owner),
            ),
          )
          .orderBy(asc(identityUserStoreMigrations.createdAt))
          .limit(1)
          .for("update", { skipLocked: true });
        if (!free) return undefined;
        const [job] = await tx
          .update(identityUserStoreMigrations)
          .set({ leaseOwner: owner, leaseExpiresAt: now() + leaseMs })
          .where(eq(identityUserStoreMigrations.poolId, free.poolId))
          .returning();
        return job;
      });
    },

    /** Extends the lease; undefined when the job is gone or another owner took it. */
    async renew(job: MigrationJob, owner: string, leaseMs: number): Promise<MigrationJob | undefined> {
      const [row] = await db
        .update(identityUserStoreMigrations)
        .set({ leaseExpiresAt: now() + leaseMs })
        .where(and(jobOf(job), eq(identityUserStoreMigrations.leaseOwner, owner)))
        .returning();
      return row;
    },

    /** Lets another process (or this one, later) take the job once `delayMs` has passed. */
    async release(job: MigrationJob, owner: string, delayMs = 0): Promise<void> {
      await db
        .update(identityUserStoreMigrations)
        .set({ leaseOwner: "", leaseExpiresAt: now() + delayMs })
        .where(and(jobOf(job), eq(identityUserStoreMigrations.leaseOwner, owner)));
    },

    async pool(ref: PoolRef): Promise<PoolRecord | undefined> {
      const [row] = await db.select().from(identityPools).where(poolOf(ref));
      return row;
    },

    async setCursor(job: MigrationJob, cursor: string, executor: Database = db): Promise<void> {
      await executor.update(identityUserStoreMigrations).set({ cursor }).where(jobOf(job));
    },

    /**
     * Moves the pool's migration record on from `from` (in `db`, or the caller's transaction):
     * `change` gives the new record (null removes it) and any other pool columns. False when the
     * record had already left `from` (an abort, another process).
     */
    async advance(
      ref: PoolRef,
      from: MigrationPhase,
      change: (current: PoolMigration) => { readonly migration: PoolMigration | null; readonly pool?: PoolUpdate },
      executor: Database = db,
    ): Promise<boolean> {
      const [row] = await executor
        .select({ migration: identityPools.migration })
        .from(identityPools)
        .where(and(poolOf(ref), sql`${identityPools.migration}->>'phase' = ${from}`))
        .for("update");
      if (!row?.migration) return false;
      const next = change(row.migration);
      await executor
        .update(identityPools)
        .set({ ...next.pool, migration: next.migration ? { ...next.migration, updatedAt: now() } : null })
        .where(poolOf(ref));
      return true;
    },

    /** Marks the job as only having the target's partial copy left to erase. */
    async discard(ref: PoolRef, executor: Database = db): Promise<void> {
      await executor.update(identityUserStoreMigrations).set({ state: "discarding" }).where(jobOf(ref));
    },

    async remove(ref: PoolRef, executor: Database = db): Promise<void> {
      await executor.delete(identityUserStoreMigrations).where(jobOf(ref));
    },

    /**
     * Ends the migration in `failed` with the pool serving from its source (it never left it):
     * the pool leaves `migrating` for `migration_failed` and the target's copy is erased.
     */
    async fail(ref: PoolRef, from: MigrationPhase, error: string): Promise<boolean> {
      return db.transaction(async (tx) => {
        const moved = await jobs.advance(
          ref,
          from,
          (current) => ({ migration: { ...current, phase: "failed", error }, pool: { state: "migration_failed" } }),
          tx,
        );
        if (moved) await jobs.discard(ref, tx);
        return moved;
      });
    },
  };
  return jobs;
}

export type MigrationJobs = ReturnType<typeof migrationJobs>;
