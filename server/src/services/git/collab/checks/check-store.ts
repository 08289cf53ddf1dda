import { and, asc, eq, gt, sql } from "drizzle-orm";
import { nowMs } from "../../../../db/column-types.js";
import type { Database } from "../../../../db/database.js";
import type { CheckConclusion, CheckStatus } from "./check-rollup.js";
import { gitCheckLogChunks, gitChecks } from "./git-checks-schema.js";

export type CheckRow = Omit<typeof gitChecks.$inferSelect, "orgId">;

export interface CheckCreate {
  readonly repoId: string;
  readonly headSha: string;
  readonly name: string;
  readonly status: CheckStatus;
  readonly conclusion: CheckConclusion | null;
  readonly detailsUrl: string | null;
  readonly outputSummary: string | null;
}

/** Fields a PATCH may change; absent ones keep their value. */
export interface CheckUpdate {
  readonly status?: CheckStatus;
  readonly conclusion?: CheckConclusion | null;
  readonly detailsUrl?: string | null;
  readonly outputSummary?: string | null;
}

export interface LogChunk {
  /** The chunk's first byte in the whole log (UTF-8); the live tail's event id. */
  readonly offset: number;
  readonly text: string;
}

export interface CheckStore {
  create(orgId: string, check: CheckCreate): Promise<CheckRow>;
  get(orgId: string, repoId: string, checkId: string): Promise<CheckRow | undefined>;
  update(orgId: string, repoId: string, checkId: string, change: CheckUpdate): Promise<CheckRow | undefined>;
  /** The checks of one commit, oldest first. */
  listForCommit(orgId: string, repoId: string, headSha: string): Promise<CheckRow[]>;
  /**
   * Appends text at the end of the log and answers where it landed. Locks the check row so two
   * writers never claim the same offset; call it outside any longer transaction.
   */
  appendLog(orgId: string, repoId: string, checkId: string, text: string): Promise<LogChunk | undefined>;
  /** The chunks starting after `afterOffset` (-1 for all), in order. */
  readLog(checkId: string, afterOffset: number): Promise<LogChunk[]>;
}

const rowColumns = {
  id: gitChecks.id,
  repoId: gitChecks.repoId,
  headSha: gitChecks.headSha,
  name: gitChecks.name,
  status: gitChecks.status,
  conclusion: gitChecks.conclusion,
  detailsUrl: gitChecks.detailsUrl,
  outputSummary: gitChecks.outputSummary,
  logBytes: gitChecks.logBytes,
  createdAt: gitChecks.createdAt,
  updatedAt: gitChecks.updatedAt,
  completedAt: gitChecks.completedAt,
};

const utf8Length = (text: string) => Buffer.byteLength(text, "utf8");

/** Queries on the check tables, each scoped to an organization and repository. */
export function createCheckStore(db: Database): CheckStore {
  const one = (orgId: string, repoId: string, checkId: string) =>
    and(eq(gitChecks.orgId, orgId), eq(gitChecks.repoId, repoId), eq(gitChecks.id, checkId));

  return {
    async create(orgId, check) {
      const [row] = await db
        .insert(gitChecks)
        .values({
          orgId,
          ...check,
          conclusion: check.status === "completed" ? check.conclusion : null,
          completedAt: check.status === "completed" ? nowMs : null,
        })
        .returning(rowColumns);
      return row!;
    },

    async get(orgId, repoId, checkId) {
      const [row] = await db
        .select(rowColumns)
        .from(gitChecks)
        .where(one(orgId, repoId, checkId));
      return row;
    },

    async update(orgId, repoId, checkId, change) {
      const completing = change.status === "completed";
      const reopening = change.status !== undefined && !completing;
      const [row] = await db
        .update(gitChecks)
        .set({
          ...change,
          // A conclusion only means something on a completed check; moving back to queued or
          // in_progress (a re-run) clears it and the completion time.
          ...(reopening ? { conclusion: null, completedAt: null } : {}),
          ...(completing ? { completedAt: sql`coalesce(${gitChecks.completedAt}, ${nowMs})` } : {}),
          updatedAt: sql`greatest(${nowMs}, ${gitChecks.updatedAt} + 1)`,
        })
        .where(one(orgId, repoId, checkId))
        .returning(rowColumns);
      return row;
    },

    async listForCommit(orgId, repoId, headSha) {
      return db
        .select(rowColumns)
        .from(gitChecks)
        .where(and(eq(gitChecks.orgId, orgId), eq(gitChecks.repoId, repoId), eq(gitChecks.headSha, headSha)))
        .orderBy(asc(gitChecks.createdAt), asc(gitChecks.id));
    },

    async appendLog(orgId, repoId, checkId, text) {
      // An empty chunk would claim the offset the next real one needs.
      if (text === "") throw new RangeError("empty log chunk");
      return db.transaction(async (tx) => {
        const bytes = utf8Length(text);
        const [claimed] = await tx
          .update(gitChecks)
          .set({ logBytes: sql`${gitChecks.logBytes} + ${bytes}` })
          .where(one(orgId, repoId, checkId))
          .returning({ end: gitChecks.logBytes });
        if (!claimed) return undefined;
        const offset = claimed.end - bytes;
        await tx.insert(gitCheckLogChunks).values({ checkId, offset, text });
        return { offset, text };
      });
    },

    async readLog(checkId, afterOffset) {
      return db
        .select({ offset: gitCheckLogChunks.offset, text: gitCheckLogChunks.text })
        .from(gitCheckLogChunks)
        .where(and(eq(gitCheckLogChunks.checkId, checkId), gt(gitCheckLogChunks.offset, afterOffset)))
        .orderBy(asc(gitCheckLogChunks.offset));
    },
  };
}
