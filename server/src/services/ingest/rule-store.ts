import { and, asc, eq, gt, lte, ne, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { ingestRules } from "./ingest-schema.js";

export type RuleRow = typeof ingestRules.$inferSelect;
export type NewRule = Omit<typeof ingestRules.$inferInsert, "orgId" | "createdAt" | "updatedAt">;
export type RuleChange = Partial<Omit<NewRule, "id" | "bucket">>;

/** Ingest rules of an organization's buckets; every query is scoped to the organization and bucket. */
export function createRuleStore(db: Database) {
  const ruleOf = (orgId: string, bucket: string, ruleId: string) =>
    and(eq(ingestRules.orgId, orgId), eq(ingestRules.bucket, bucket), eq(ingestRules.id, ruleId));

  return {
    async insert(orgId: string, rule: NewRule): Promise<RuleRow> {
      const [row] = await db
        .insert(ingestRules)
        .values({ ...rule, orgId })
        .returning();
      return row!;
    },

    async get(orgId: string, bucket: string, ruleId: string): Promise<RuleRow | undefined> {
      const [row] = await db
        .select()
        .from(ingestRules)
        .where(ruleOf(orgId, bucket, ruleId));
      return row;
    },

    /** Rules of a bucket, oldest first, after `afterId` (keyset on id within created order is not needed: ids are UUIDv4, so order by id). */
    async list(
      orgId: string,
      bucket: string,
      filter: { sourceId?: string; pipelineId?: string; afterId?: string; limit?: number },
    ): Promise<RuleRow[]> {
      const query = db
        .select()
        .from(ingestRules)
        .where(
          and(
            eq(ingestRules.orgId, orgId),
            eq(ingestRules.bucket, bucket),
            filter.sourceId ? eq(ingestRules.sourceId, filter.sourceId) : undefined,
            filter.pipelineId ? eq(ingestRules.pipelineId, filter.pipelineId) : undefined,
            filter.afterId ? gt(ingestRules.id, filter.afterId) : undefined,
          ),
        )
        .orderBy(asc(ingestRules.id));
      return filter.limit === undefined ? query : query.limit(filter.limit);
    },

    /** Unpaused rules of a source with one of these triggers. */
    async active(orgId: string, bucket: string, sourceId: string, triggers: readonly string[]): Promise<RuleRow[]> {
      const rows = await db
        .select()
        .from(ingestRules)
        .where(
          and(
            eq(ingestRules.orgId, orgId),
            eq(ingestRules.bucket, bucket),
            eq(ingestRules.sourceId, sourceId),
            eq(ingestRules.paused, false),
          ),
        );
      return rows.filter((row) => triggers.includes(row.trigger));
    },

    async update(orgId: string, bucket: string, ruleId: string, change: RuleChange): Promise<RuleRow | undefined> {
      const [row] = await db
        .update(ingestRules)
        .set({ ...change, updatedAt: sql`(extract(epoch from statement_timestamp()) * 1000)::bigint` })
        .where(ruleOf(orgId, bucket, ruleId))
        .returning();
      return row;
    },

    async delete(orgId: string, bucket: string, ruleId: string): Promise<boolean> {
      const rows = await db
        .delete(ingestRules)
        .where(ruleOf(orgId, bucket, ruleId))
        .returning({ id: ingestRules.id });
      return rows.length > 0;
    },

    /**
     * Scheduled rules that are due, each moved to its next time in the same statement, so that of
     * several processes polling at once exactly one starts each scheduled run.
     */
    async takeDue(now: number, next: (rule: RuleRow) => number): Promise<RuleRow[]> {
      return db.transaction(async (tx) => {
        const due = await tx
          .select()
          .from(ingestRules)
          .where(
            and(
              eq(ingestRules.trigger, "schedule"),
              eq(ingestRules.paused, false),
              ne(ingestRules.nextRunAt, 0),
              lte(ingestRules.nextRunAt, now),
            ),
          )
          .limit(20)
          .for("update", { skipLocked: true });
        for (const rule of due) {
          await tx
            .update(ingestRules)
            .set({ nextRunAt: next(rule) })
            .where(eq(ingestRules.id, rule.id));
        }
        return due;
      });
    },
  };
}

export type RuleStore = ReturnType<typeof createRuleStore>;
