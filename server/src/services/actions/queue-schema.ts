import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { epochMs, nowMs } from "../../db/column-types.js";
import { storedJson } from "../../db/stored-json.js";
import { organizations } from "../../auth/auth-schema.js";

/** Where a queued dispatch is: waiting for a worker, held by one, or ended (its manifest tells how). */
export type QueueStatus = "queued" | "running" | "done";

/**
 * The actions service's durable work queue: one row per enqueued dispatch. Workers of any process
 * claim rows with `FOR UPDATE SKIP LOCKED` and a lease; a row whose lease lapsed (its process died)
 * is claimed again and resumes the thread recorded in `thread_id`. Ended rows stay a while as
 * `done`, so that a watch finds where the run's manifest is, and are then purged.
 */
export const actionQueue = pgTable(
  "action_queue",
  {
    runId: uuid("run_id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    actionId: text("action_id").notNull(),
    batchId: text("batch_id").notNull().default(""),
    /** `{reverse_ts}` of the run's storage prefix, fixed at enqueue. */
    reverseTs: text("reverse_ts").notNull(),
    /** The Selection as proto JSON. */
    selection: storedJson("selection").notNull(),
    params: storedJson("params").notNull(),
    /** What ListActiveRuns shows of the selection: the object key, `table:<name>`, ... */
    selectionLabel: text("selection_label").notNull().default(""),
    status: text("status").$type<QueueStatus>().notNull().default("queued"),
    /** The run's thread once it exists: a worker taking over resumes it rather than starting another. */
    threadId: text("thread_id").notNull().default(""),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    /** Claims so far: a run whose worker keeps dying is failed after a few. */
    attempts: integer("attempts").notNull().default(0),
    enqueuedAt: epochMs("enqueued_at").notNull().default(nowMs),
    startedAt: epochMs("started_at").notNull().default(0),
    finishedAt: epochMs("finished_at").notNull().default(0),
  },
  (t) => [
    check("action_queue_status", sql`${t.status} in ('queued', 'running', 'done')`),
    // Claims: the oldest open rows, per organization.
    index("action_queue_open").on(t.status, t.orgId, t.enqueuedAt),
    // ListActiveRuns of a bucket.
    index("action_queue_bucket").on(t.orgId, t.bucket, t.status),
  ],
);
