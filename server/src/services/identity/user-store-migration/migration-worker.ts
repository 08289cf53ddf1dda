import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { startPollLoop } from "../../../background/poll-loop.js";
import type { Database } from "../../../db/database.js";
import type { Logger } from "../../../log/logger.js";
import type { UserStoreDirectory } from "../user-store-directory.js";
import { migrationJobs, ROLLBACK_PHASES, type MigrationJob } from "./migration-jobs.js";
import { runMigrationStep, type MigrationHooks } from "./migration-steps.js";

/** The NOTIFY channel a start or an abort wakes the workers of every process with. */
export const MIGRATION_CHANNEL = "identity_user_store_migrations";

export interface MigrationWorkerOptions {
  readonly db: Database;
  readonly directory: UserStoreDirectory;
  readonly logger: Logger;
  /** LISTEN on the database (the handle's `listen`); without it the worker only polls. */
  readonly listen?: ((channel: string, handler: (payload: string) => void) => Promise<() => Promise<void>>) | undefined;
  readonly leaseMs?: number;
  readonly pollMs?: number;
  readonly batchSize?: number;
  readonly lockDrainMs?: number;
  readonly watermarkSlackMs?: number;
  readonly now?: () => number;
  readonly hooks?: MigrationHooks;
}

export interface MigrationWorker {
  /** Looks for work now instead of at the next poll. */
  wake(): void;
  /**
   * Stops after the current step and gives the lease back, so another process resumes at once.
   * `keepLease` leaves it as a crash would: the job resumes when the lease lapses.
   */
  stop(options?: { readonly keepLease?: boolean }): Promise<void>;
}

/** Wakes every process's workers: called after a migration is started or aborted. */
export async function notifyMigrationWorkers(db: Database): Promise<void> {
  await db.execute(sql`select pg_notify(${MIGRATION_CHANNEL}, '')`);
}

/**
 * Runs user-store migrations: takes a job nobody holds, works it step by step while renewing its
 * lease, and goes back to waiting. A failure before cutover ends the migration in `failed` (the
 * pool never left its source); after cutover the pool already serves from the target, so the
 * step is retried once the lease lapses.
 */
export async function startMigrationWorker(options: MigrationWorkerOptions): Promise<MigrationWorker> {
  const now = options.now ?? Date.now;
  const leaseMs = options.leaseMs ?? 30_000;
  const pollMs = options.pollMs ?? 5_000;
  const owner = randomUUID();
  const jobs = migrationJobs(options.db, now);
  const deps = {
    db: options.db,
    jobs,
    directory: options.directory,
    batchSize: options.batchSize ?? 500,
    lockDrainMs: options.lockDrainMs ?? 1_000,
    watermarkSlackMs: options.watermarkSlackMs ?? 5_000,
    now,
    hooks: options.hooks,
  };
  const failures = new Map<string, number>();
  let stopped = false;
  let keepLease = false;
  const unlisten = await options.listen?.(MIGRATION_CHANNEL, () => loop.wake());

  async function work(claimed: MigrationJob): Promise<void> {
    let job: MigrationJob | undefined = claimed;
    while (job && !stopped) {
      try {
        if ((await runMigrationStep(deps, job)) === "finished") return;
        failures.delete(job.poolId);
      } catch (error) {
        await onFailure(job, error);
        return;
      }
      job = await jobs.renew(job, owner, leaseMs);
    }
    if (job && !keepLease) await jobs.release(job, owner);
  }

  async function onFailure(job: MigrationJob, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const ref = { orgId: job.orgId, poolId: job.poolId };
    const phase = (await jobs.pool(ref))?.migration?.phase;
    options.logger.warn("user-store migration step failed", {
      poolId: job.poolId,
      phase: phase ?? job.state,
      error: message,
    });
    if (job.state === "running" && phase && ROLLBACK_PHASES.includes(phase)) {
      await jobs.fail(ref, phase, message);
      await jobs.release(job, owner);
      return;
    }
    // Erasing a copy or the source again later; a store gone for good is given up on after a while
    // so the pool can be migrated or re-pointed again.
    const attempts = (failures.get(job.poolId) ?? 0) + 1;
    failures.set(job.poolId, attempts);
    if (job.state === "discarding" && attempts >= 5) {
      options.logger.warn("giving up erasing a user-store migration's copy", { poolId: job.poolId });
      await jobs.remove(ref);
      return;
    }
    await jobs.release(job, owner, Math.min(60_000, 1_000 * 2 ** attempts));
  }

  // A pass takes one job and works it; another may be waiting, so a pass that found one goes again.
  const loop = startPollLoop(
    async () => {
      const job = await jobs.claim(owner, leaseMs);
      if (job) await work(job);
      return job !== undefined && !stopped;
    },
    {
      pollMs,
      onError: (error) =>
        options.logger.warn("user-store migration worker error", {
          error: error instanceof Error ? error.message : String(error),
        }),
    },
  );

  return {
    wake: () => loop.wake(),
    async stop(options) {
      keepLease = options?.keepLease ?? false;
      stopped = true;
      await loop.stop();
      await unlisten?.();
    },
  };
}
