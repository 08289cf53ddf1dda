import type { Database } from "../../../db/database.js";
import type { MigrationPhase } from "../identity-schema.js";
import type { PoolRef } from "../pool-store.js";
import type { StoredUserStore, UserStoreDirectory } from "../user-store-directory.js";
import type { MigrationJob, MigrationJobs } from "./migration-jobs.js";
import { userRows, type UserRows } from "./user-rows.js";
import { verifyCopy } from "./verify-copy.js";

/** Test seams: run before the step of a phase (to write during the copy, or to spoil the target). */
export interface MigrationHooks {
  beforeStep?(phase: MigrationPhase | "discarding", pool: PoolRef): Promise<void>;
}

export interface MigrationStepDeps {
  readonly db: Database;
  readonly jobs: MigrationJobs;
  readonly directory: UserStoreDirectory;
  readonly batchSize: number;
  /**
   * How long the locked phase waits after the pool locked before it reads the changes: a write
   * that passed the lock check just before the flip lands meanwhile. Verification catches any
   * write that still slips past (and rolls back).
   */
  readonly lockDrainMs: number;
  /**
   * How far before the warm copy's start the delta reaches back: a write whose statement began
   * before the watermark but committed after the copy read its row is still picked up.
   */
  readonly watermarkSlackMs: number;
  readonly now: () => number;
  readonly hooks?: MigrationHooks | undefined;
}

/** Only the managed store and `postgres://` databases take part in a migration. */
const storeOf = (sealedUrl: Uint8Array | null): StoredUserStore => ({
  description: { kind: sealedUrl ? "postgres" : "managed" },
  sealedUrl,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Does one bounded piece of a job (a batch, a phase change) and answers whether more is left.
 * Each piece records its progress before it answers, so a job resumes where it stopped in
 * whichever process takes it next.
 */
export async function runMigrationStep(deps: MigrationStepDeps, job: MigrationJob): Promise<"more" | "finished"> {
  const { jobs, batchSize } = deps;
  const ref: PoolRef = { orgId: job.orgId, poolId: job.poolId };
  const rowsOf = async (sealedUrl: Uint8Array | null): Promise<UserRows> =>
    userRows(await deps.directory.database(ref, storeOf(sealedUrl)), ref);

  if (job.state === "discarding") {
    await deps.hooks?.beforeStep?.("discarding", ref);
    const target = await rowsOf(job.sealedTargetUrl);
    if ((await target.deleteSome(batchSize)) > 0) return "more";
    await jobs.remove(ref);
    return "finished";
  }
  const migration = (await jobs.pool(ref))?.migration;
  if (!migration) {
    await jobs.discard(ref);
    return "more";
  }
  await deps.hooks?.beforeStep?.(migration.phase, ref);
  const source = await rowsOf(job.sealedSourceUrl);
  const target = await rowsOf(job.sealedTargetUrl);

  switch (migration.phase) {
    case "warm_copy": {
      // Before the first batch the target must hold nothing of this pool (a previous attempt's rows).
      if (job.cursor === "") while ((await target.deleteSome(batchSize)) > 0);
      const rows = await source.after(job.cursor, batchSize);
      if (rows.length === 0) {
        const usersTotal = await source.count();
        await jobs.advance(ref, "warm_copy", (current) => ({
          migration: { ...current, phase: "locked_delta", usersTotal },
        }));
        return "more";
      }
      const inserted = await target.insert(rows);
      await deps.db.transaction(async (tx) => {
        await jobs.advance(
          ref,
          "warm_copy",
          (current) => ({ migration: { ...current, usersCopied: current.usersCopied + inserted } }),
          tx,
        );
        await jobs.setCursor(job, rows.at(-1)!.id, tx);
      });
      return "more";
    }
    case "locked_delta": {
      const wait = migration.updatedAt + deps.lockDrainMs - deps.now();
      if (wait > 0) await sleep(wait);
      const changed = await source.changedSince(job.watermark - deps.watermarkSlackMs);
      const live = new Set(await source.ids());
      const changedIds = new Set(changed.map((row) => row.id));
      // Rows deleted at the source and rows changed since the watermark leave the target; the
      // changed ones come back as they are now. The result equals the source, so no unique
      // address can collide on the way.
      const stale = (await target.ids()).filter((id) => !live.has(id) || changedIds.has(id));
      await target.transaction(async (rows) => {
        await rows.deleteIds(stale);
        await rows.insert(changed);
      });
      const usersTotal = live.size;
      await jobs.advance(ref, "locked_delta", (current) => ({
        migration: { ...current, phase: "verifying", usersTotal, usersCopied: usersTotal },
      }));
      return "more";
    }
    case "verifying": {
      const mismatch = await verifyCopy(source, target, batchSize);
      if (mismatch) {
        await jobs.fail(ref, "verifying", `verification failed: ${mismatch}`);
        return "more";
      }
      // The switch itself: from here on the pool reads and writes the target, unlocked.
      await jobs.advance(ref, "verifying", (current) => ({
        migration: { ...current, phase: "cutover" },
        pool: { userStore: current.target, sealedUserStoreUrl: job.sealedTargetUrl },
      }));
      return "more";
    }
    case "cutover":
      await jobs.advance(ref, "cutover", (current) => ({
        migration: { ...current, phase: current.keepSource ? "done" : "purging" },
      }));
      return "more";
    case "purging":
      if ((await source.deleteSome(batchSize)) > 0) return "more";
      await jobs.advance(ref, "purging", (current) => ({ migration: { ...current, phase: "done" } }));
      return "more";
    case "done":
      await deps.db.transaction(async (tx) => {
        await jobs.advance(ref, "done", () => ({ migration: null, pool: { state: "active" } }), tx);
        await jobs.remove(ref, tx);
      });
      return "finished";
    case "failed":
      await jobs.discard(ref);
      return "more";
  }
}
