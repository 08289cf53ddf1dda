import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uuid,
  type AnyPgColumn,
} from "drizzle-orm/pg-core";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";
import { storedJson } from "../../db/stored-json.js";
import { organizations } from "../../auth/auth-schema.js";

/**
 * The tables of the script service: its environment, scripts and their versions, threads with
 * their steps, events, artifacts and callbacks, and the callback signing keys.
 */

/** Tenant-wide environment variables of the script service, sealed at rest like secrets. */
export const envVars = pgTable(
  "env_vars",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** The value sealed by the secret box, bound to the organization and key (env-sealing.ts). */
    sealedValue: bytea("sealed_value"),
    /**
     * A value written before values were sealed: start-up seals it into sealed_value and clears
     * it (sealPlaintextEnvValues), and nothing else reads it. A later migration drops the column
     * once every installation has started once on sealed values.
     */
    plaintextValue: text("value"),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.key] }), sealedOrPlaintext("env_vars_sealed_or_plaintext", t)],
);

/**
 * A value is sealed or, until start-up seals it, plaintext: never both, so that a server from before
 * sealing that overwrites a sealed row fails instead of leaving a stale sealed value behind.
 */
function sealedOrPlaintext(name: string, t: { sealedValue: AnyPgColumn; plaintextValue: AnyPgColumn }) {
  return check(name, sql`(${t.sealedValue} is null) <> (${t.plaintextValue} is null)`);
}

/** The per-script environment overlay, sealed at rest like the tenant variables. */
export const scriptEnvVars = pgTable(
  "script_env_vars",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    scriptName: text("script_name").notNull(),
    key: text("key").notNull(),
    /** The value sealed by the secret box, bound to the organization, script and key (env-sealing.ts). */
    sealedValue: bytea("sealed_value"),
    /** A value written before values were sealed, as env_vars.value. */
    plaintextValue: text("value"),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.scriptName, t.key] }),
    sealedOrPlaintext("script_env_vars_sealed_or_plaintext", t),
  ],
);

/** Scripts of the script service: a name and the version threads run when they ask for 0. */
export const scripts = pgTable(
  "scripts",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    activeVersion: integer("active_version").notNull(),
    latestVersion: integer("latest_version").notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/** Immutable script versions: the source as published and what was derived from it. */
export const scriptVersions = pgTable(
  "script_versions",
  {
    orgId: uuid("org_id").notNull(),
    scriptName: text("script_name").notNull(),
    version: integer("version").notNull(),
    source: text("source").notNull(),
    sourceSha256: text("source_sha256").notNull(),
    description: text("description").notNull().default(""),
    /** The contract's JSON Schemas, `{inputs, outputs}`. */
    contract: jsonb("contract")
      .$type<{ inputs: Record<string, unknown>; outputs: Record<string, unknown> }>()
      .notNull(),
    toolsRequired: text("tools_required").array().notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.scriptName, t.version] }),
    foreignKey({ columns: [t.orgId, t.scriptName], foreignColumns: [scripts.orgId, scripts.name] }).onDelete("cascade"),
  ],
);

export type ThreadStatus = "pending" | "running" | "paused" | "cancelling" | "completed" | "failed" | "cancelled";
export type StepStatus = "running" | "waiting" | "paused" | "completed" | "failed" | "skipped" | "cancelled";

/**
 * Threads: one execution of a script version. The row is the unit of work of the engine: a
 * worker claims a runnable row with a lease (`lease_owner`, `lease_expires_at`) and renews it
 * while it runs; a row whose lease expired (its process died) is claimable again.
 */
export const threads = pgTable(
  "threads",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    scriptName: text("script_name").notNull(),
    scriptVersion: integer("script_version").notNull(),
    status: text("status").$type<ThreadStatus>().notNull().default("pending"),
    input: storedJson("input").$type<Record<string, unknown>>().notNull(),
    /**
     * `{}`. A thread created before environments were sealed held its environment here in
     * plaintext, until the start-up step sealed it into `sealed_env` (env-sealing.ts).
     */
    env: storedJson("env").$type<Record<string, string>>().notNull(),
    /** The environment merged at creation (load_env), sealed and bound to the thread; null when none was loaded. */
    sealedEnv: bytea("sealed_env"),
    metadata: storedJson("metadata").$type<Record<string, string>>().notNull(),
    timeoutMs: epochMs("timeout_ms").notNull().default(0),
    /** Wall-clock deadline (epoch ms), 0 for none. */
    deadlineAt: epochMs("deadline_at").notNull().default(0),
    callbackUrl: text("callback_url").notNull().default(""),
    error: text("error").notNull().default(""),
    failedStepPath: text("failed_step_path").notNull().default(""),
    currentStepPath: text("current_step_path").notNull().default(""),
    currentStepName: text("current_step_name").notNull().default(""),
    totalSteps: integer("total_steps").notNull().default(0),
    /** The script's final output, once completed. */
    output: storedJson("output"),
    /** Where the final output does not match the script's `outputs` schema, one line each: the thread completed anyway. */
    warnings: storedJson("warnings").$type<string[]>().notNull().default([]),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    startedAt: epochMs("started_at").notNull().default(0),
    finishedAt: epochMs("finished_at").notNull().default(0),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    /** Not claimable before this time (a `wait` step). */
    runAfter: epochMs("run_after").notNull().default(0),
    cancelRequested: boolean("cancel_requested").notNull().default(false),
    cancelReason: text("cancel_reason").notNull().default(""),
    /** A resumed step's replacement input, consumed by the step that failed or paused. */
    resumeOverride: storedJson("resume_override"),
    resumeCount: integer("resume_count").notNull().default(0),
    /** Last event sequence written; events are numbered from 1 per thread. */
    eventSequence: integer("event_sequence").notNull().default(0),
    /** Last `yielded` sequence. */
    yieldSequence: integer("yield_sequence").notNull().default(0),
  },
  (t) => [
    index("threads_runnable_idx").on(t.status, t.runAfter),
    index("threads_org_created_idx").on(t.orgId, t.createdAt),
  ],
);

/** Every step a thread ran or is running, by its hierarchical path: the durable record replays read. */
export const threadSteps = pgTable(
  "thread_steps",
  {
    threadId: uuid("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    stepPath: text("step_path").notNull(),
    orgId: uuid("org_id").notNull(),
    stepId: text("step_id").notNull(),
    name: text("name").notNull(),
    primitive: text("primitive").notNull(),
    tool: text("tool").notNull().default(""),
    parentPath: text("parent_path").notNull().default(""),
    status: text("status").$type<StepStatus>().notNull(),
    input: storedJson("input"),
    output: storedJson("output"),
    error: text("error").notNull().default(""),
    attempt: integer("attempt").notNull().default(1),
    /** A `wait` step's wake-up time, epoch ms. */
    wakeAt: epochMs("wake_at").notNull().default(0),
    startedAt: epochMs("started_at").notNull().default(0),
    finishedAt: epochMs("finished_at").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.stepPath] })],
);

/** The events of a thread in order, replayed to late watchers. */
export const threadEvents = pgTable(
  "thread_events",
  {
    threadId: uuid("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    orgId: uuid("org_id").notNull(),
    stepPath: text("step_path").notNull().default(""),
    /** The ThreadEvent variant (`started`, `step_started`, ...) or a step-only kind (`decision`). */
    kind: text("kind").notNull(),
    /** The variant's fields in proto3 JSON. */
    payload: storedJson("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.sequence] })],
);

/**
 * Files steps wrote with `artifact.write`. The bytes live in object storage under the thread's
 * prefix (`threads/<thread_id>/artifacts/<path>`); this row is what ListArtifacts reads, so a
 * listing is one tenant-filtered query whatever the store.
 */
export const threadArtifacts = pgTable(
  "thread_artifacts",
  {
    threadId: uuid("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    path: text("path").notNull(),
    orgId: uuid("org_id").notNull(),
    contentType: text("content_type").notNull(),
    sizeBytes: epochMs("size_bytes").notNull(),
    /** Hex SHA-256 of the bytes, to tell a download was whole. */
    sha256: text("sha256").notNull(),
    /** The step that wrote it last. */
    stepPath: text("step_path").notNull().default(""),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.path] })],
);

export type CallbackStatus = "pending" | "delivered" | "failed";

/**
 * The callback outbox: a row is written in the same transaction as a thread's end, then
 * delivered to `callback_url` with retries. Its id is the delivery's stable `webhook-id`.
 */
export const threadCallbacks = pgTable(
  "thread_callbacks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    threadId: uuid("thread_id")
      .notNull()
      .references(() => threads.id, { onDelete: "cascade" }),
    orgId: uuid("org_id").notNull(),
    url: text("url").notNull(),
    /** The body, fixed at the first attempt so every retry sends the same bytes. */
    body: text("body"),
    status: text("status").$type<CallbackStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: epochMs("next_attempt_at").notNull().default(0),
    /** A deliverer's claim, so two processes never post the same attempt. */
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    lastError: text("last_error").notNull().default(""),
    lastStatusCode: integer("last_status_code").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    deliveredAt: epochMs("delivered_at").notNull().default(0),
  },
  (t) => [
    index("thread_callbacks_due_idx").on(t.status, t.nextAttemptAt),
    index("thread_callbacks_thread_idx").on(t.threadId),
  ],
);

/**
 * Each organization's key for signing callbacks (Standard Webhooks, HMAC-SHA256). It is shown to
 * the organization, so it is sealed like a secret. After a rotation the previous key keeps
 * signing beside the new one until `previous_expires_at`, so receivers can switch without a gap.
 */
export const callbackSigningKeys = pgTable("callback_signing_keys", {
  orgId: uuid("org_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  sealedKey: bytea("sealed_key").notNull(),
  sealedPreviousKey: bytea("sealed_previous_key"),
  previousExpiresAt: epochMs("previous_expires_at").notNull().default(0),
  createdAt: epochMs("created_at").notNull().default(nowMs),
});
