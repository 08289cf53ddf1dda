import { boolean, index, integer, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { organizations } from "../../auth/auth-schema.js";
import { epochMs, nowMs } from "../../db/column-types.js";

/**
 * The ingest service's tables: rules binding a source to a pipeline, the source sync runs, and the
 * durable ingest jobs with one row per object they process. Jobs are claimed with leases (like the
 * script engine's threads), so any process sharing the database runs them and a job whose process
 * died is taken over when its lease lapses. Every row carries `org_id`; `bucket` is a name inside it.
 */

export type RuleTriggerName = "on_change" | "schedule" | "manual";

export const ingestRules = pgTable(
  "ingest_rules",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    name: text("name").notNull(),
    sourceId: text("source_id").notNull(),
    pipelineId: text("pipeline_id").notNull(),
    trigger: text("trigger").$type<RuleTriggerName>().notNull(),
    scheduleCron: text("schedule_cron").notNull().default(""),
    /** Epoch ms of the next scheduled ingestion; 0 unless the trigger is `schedule`. */
    nextRunAt: epochMs("next_run_at").notNull().default(0),
    filterPrefix: text("filter_prefix").notNull().default(""),
    filterContentTypes: jsonb("filter_content_types").$type<string[]>().notNull().default([]),
    paused: boolean("paused").notNull().default(false),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    index("ingest_rules_bucket_idx").on(t.orgId, t.bucket, t.createdAt),
    index("ingest_rules_schedule_idx").on(t.nextRunAt),
  ],
);

export type SyncKindName = "discovery" | "ingestion";
export type SyncStateName = "queued" | "running" | "succeeded" | "failed";

export const ingestSyncRuns = pgTable(
  "ingest_sync_runs",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    sourceId: text("source_id").notNull(),
    kind: text("kind").$type<SyncKindName>().notNull(),
    state: text("state").$type<SyncStateName>().notNull(),
    objectsDiscovered: integer("objects_discovered").notNull().default(0),
    jobsStarted: integer("jobs_started").notNull().default(0),
    errorMessage: text("error_message").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    finishedAt: epochMs("finished_at").notNull().default(0),
    /** Only for ingestion runs: the rules to sync (all unpaused rules of the source when empty) and whether unchanged objects go again. */
    ruleIds: jsonb("rule_ids").$type<string[]>().notNull().default([]),
    fullResync: boolean("full_resync").notNull().default(false),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
  },
  (t) => [index("ingest_sync_runs_source_idx").on(t.orgId, t.sourceId, t.kind, t.createdAt)],
);

export type JobStatusName = "queued" | "running" | "succeeded" | "partially_failed" | "failed";

/** What a job takes from its source: listed objects (events, explicit keys) or a listing to make. */
export interface JobSelection {
  /** Explicit keys; the job's objects were written when it was created. */
  readonly keys?: readonly string[];
  /** Key prefix to list when the worker first takes the job. */
  readonly prefix?: string;
  /** Re-process objects whose etag did not change. */
  readonly force?: boolean;
}

export const ingestJobs = pgTable(
  "ingest_jobs",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    ruleId: text("rule_id").notNull(),
    pipelineId: text("pipeline_id").notNull(),
    sourceId: text("source_id").notNull(),
    status: text("status").$type<JobStatusName>().notNull(),
    attempt: integer("attempt").notNull().default(1),
    selection: jsonb("selection").$type<JobSelection>().notNull(),
    /** False until the worker has written the job's objects (listing a source happens on the worker). */
    listed: boolean("listed").notNull().default(false),
    objectsTotal: integer("objects_total").notNull().default(0),
    objectsSucceeded: integer("objects_succeeded").notNull().default(0),
    objectsFailed: integer("objects_failed").notNull().default(0),
    errorMessage: text("error_message").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    startedAt: epochMs("started_at").notNull().default(0),
    finishedAt: epochMs("finished_at").notNull().default(0),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
  },
  (t) => [
    index("ingest_jobs_bucket_idx").on(t.orgId, t.bucket, t.createdAt),
    index("ingest_jobs_claim_idx").on(t.status, t.leaseExpiresAt),
  ],
);

export type JobObjectChange = "put" | "delete";
export type JobObjectStatus = "pending" | "succeeded" | "failed" | "skipped";

export const ingestJobObjects = pgTable(
  "ingest_job_objects",
  {
    jobId: uuid("job_id")
      .notNull()
      .references(() => ingestJobs.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    change: text("change").$type<JobObjectChange>().notNull().default("put"),
    status: text("status").$type<JobObjectStatus>().notNull().default("pending"),
    /** Failed runs of this object that were run again automatically. */
    tries: integer("tries").notNull().default(0),
    /** The script thread embedding this object: a job taken over after a crash waits for it rather than start another. */
    threadId: text("thread_id").notNull().default(""),
    /** The etag of the content that thread was given. */
    etag: text("etag").notNull().default(""),
    chunks: integer("chunks").notNull().default(0),
    errorMessage: text("error_message").notNull().default(""),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.key] })],
);

/**
 * What each pipeline last ingested of each object of a source: the etag tells a changed object
 * (re-ingested, its chunks replaced) from an unchanged one (skipped unless forced), and the keys
 * that a sync no longer lists are the deleted objects whose chunks go.
 */
export const ingestObjectStates = pgTable(
  "ingest_object_states",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    pipelineId: text("pipeline_id").notNull(),
    sourceId: text("source_id").notNull(),
    key: text("key").notNull(),
    etag: text("etag").notNull(),
    chunks: integer("chunks").notNull(),
    ingestedAt: epochMs("ingested_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.pipelineId, t.sourceId, t.key] })],
);
