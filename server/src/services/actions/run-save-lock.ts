import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { and, eq, lt } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { actionOutputSaves } from "./save-lock-schema.js";

export interface RunSaveLockOptions {
  readonly db: Database;
  readonly now?: () => number;
  /** How long a save may hold its run before another may take it over (its process died). */
  readonly lapseMs?: number;
  /** How long a save waits for the one ahead of it. */
  readonly waitMs?: number;
}

/**
 * Runs `save` while no other save of the same run runs, in any process: two first saves of a run
 * to one target would otherwise both write, and two saves to different targets would each write
 * the manifest back without the other's promotion. ABORTED when the save ahead takes too long.
 */
export function createRunSaveLock(options: RunSaveLockOptions) {
  const { db } = options;
  const now = options.now ?? Date.now;
  const lapseMs = options.lapseMs ?? 5 * 60_000;
  const waitMs = options.waitMs ?? 30_000;

  return async function withRunSaveLock<T>(orgId: string, runId: string, save: () => Promise<T>): Promise<T> {
    const owner = randomUUID();
    const deadline = now() + waitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const started = now();
      // A save left by a process that died lapses.
      await db
        .delete(actionOutputSaves)
        .where(
          and(
            eq(actionOutputSaves.orgId, orgId),
            eq(actionOutputSaves.runId, runId),
            lt(actionOutputSaves.takenAt, started - lapseMs),
          ),
        );
      const taken = await db
        .insert(actionOutputSaves)
        .values({ orgId, runId, owner, takenAt: started })
        .onConflictDoNothing()
        .returning({ owner: actionOutputSaves.owner });
      if (taken.length > 0) break;
      if (started >= deadline)
        throw new ConnectError(`another save of run ${runId} is still in progress; retry shortly`, Code.Aborted);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    try {
      return await save();
    } finally {
      await db
        .delete(actionOutputSaves)
        .where(
          and(
            eq(actionOutputSaves.orgId, orgId),
            eq(actionOutputSaves.runId, runId),
            eq(actionOutputSaves.owner, owner),
          ),
        );
    }
  };
}

export type RunSaveLock = ReturnType<typeof createRunSaveLock>;
