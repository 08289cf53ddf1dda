import { create } from "@bufbuild/protobuf";
import {
  IngestJobSchema,
  IngestJobStatus,
  IngestRuleSchema,
  RuleFilterSchema,
  RuleTrigger,
  SyncKind,
  SyncRunSchema,
  SyncState,
  type IngestJob,
  type IngestRule,
  type SyncRun,
} from "../../../../gen/platform/data/ingest/v1/ingest_pb.js";
import type { JobStatusName, RuleTriggerName, SyncKindName, SyncStateName } from "./ingest-schema.js";
import type { JobRow } from "./job-store.js";
import type { RuleRow } from "./rule-store.js";
import type { SyncRunRow } from "./sync-store.js";

/** Rows to contract messages, and the contract's enums to the names the tables store. */

export const TRIGGERS: Record<RuleTriggerName, RuleTrigger> = {
  on_change: RuleTrigger.ON_CHANGE,
  schedule: RuleTrigger.SCHEDULE,
  manual: RuleTrigger.MANUAL,
};

export const JOB_STATUSES: Record<JobStatusName, IngestJobStatus> = {
  queued: IngestJobStatus.QUEUED,
  running: IngestJobStatus.RUNNING,
  succeeded: IngestJobStatus.SUCCEEDED,
  partially_failed: IngestJobStatus.PARTIALLY_FAILED,
  failed: IngestJobStatus.FAILED,
};

const SYNC_KINDS: Record<SyncKindName, SyncKind> = { discovery: SyncKind.DISCOVERY, ingestion: SyncKind.INGESTION };
const SYNC_STATES: Record<SyncStateName, SyncState> = {
  queued: SyncState.QUEUED,
  running: SyncState.RUNNING,
  succeeded: SyncState.SUCCEEDED,
  failed: SyncState.FAILED,
};

/** The stored name of a contract enum value; undefined for a value the contract does not define. */
export function nameOf<N extends string, E extends number>(table: Record<N, E>, value: E): N | undefined {
  return (Object.keys(table) as N[]).find((name) => table[name] === value);
}

export function ruleMessage(row: RuleRow, binding: string): IngestRule {
  return create(IngestRuleSchema, {
    ruleId: row.id,
    bucket: row.bucket,
    name: row.name,
    sourceId: row.sourceId,
    pipelineId: row.pipelineId,
    binding,
    trigger: TRIGGERS[row.trigger],
    scheduleCron: row.scheduleCron,
    filter: create(RuleFilterSchema, { prefix: row.filterPrefix, contentTypes: row.filterContentTypes }),
    paused: row.paused,
    createdAt: BigInt(row.createdAt),
    updatedAt: BigInt(row.updatedAt),
  });
}

export function jobMessage(row: JobRow): IngestJob {
  return create(IngestJobSchema, {
    jobId: row.id,
    bucket: row.bucket,
    pipelineId: row.pipelineId,
    ruleId: row.ruleId,
    sourceId: row.sourceId,
    status: JOB_STATUSES[row.status],
    attempt: row.attempt,
    objectsTotal: BigInt(row.objectsTotal),
    objectsSucceeded: BigInt(row.objectsSucceeded),
    objectsFailed: BigInt(row.objectsFailed),
    errorMessage: row.errorMessage,
    createdAt: BigInt(row.createdAt),
    startedAt: BigInt(row.startedAt),
    finishedAt: BigInt(row.finishedAt),
  });
}

export function syncRunMessage(row: SyncRunRow): SyncRun {
  return create(SyncRunSchema, {
    runId: row.id,
    sourceId: row.sourceId,
    kind: SYNC_KINDS[row.kind],
    state: SYNC_STATES[row.state],
    objectsDiscovered: BigInt(row.objectsDiscovered),
    jobsStarted: BigInt(row.jobsStarted),
    errorMessage: row.errorMessage,
    createdAt: BigInt(row.createdAt),
    finishedAt: BigInt(row.finishedAt),
  });
}
