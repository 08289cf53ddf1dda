import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { SyncStatusSchema, RuleTrigger, IngestJobStatus } from "../../../../gen/platform/data/ingest/v1/ingest_pb.js";
import type { IngestServiceImplementation } from "../../../../gen/platform/data/ingest/v1/ingest_service_server.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import { decodePageToken, encodePageToken, pageSizeOf } from "../../pagination/page-token.js";
import { CronSyntaxError, nextCronTime } from "./cron-schedule.js";
import type { RuleTriggerName } from "./ingest-schema.js";
import { JOB_STATUSES, jobMessage, nameOf, ruleMessage, syncRunMessage, TRIGGERS } from "./ingest-messages.js";
import type { PipelineDirectory, SourceDirectory } from "./ingest-ports.js";
import { createJobStore } from "./job-store.js";
import { contentTypeProblem, matchesFilter } from "./rule-filter.js";
import { createRuleStore, type RuleChange, type RuleRow } from "./rule-store.js";
import { createSyncStore } from "./sync-store.js";

/** Keys under this prefix belong to the actions service (run manifests and outputs): never ingested on change. */
export const SERVICE_OWNED_PREFIX = "_actions/";

export interface IngestServiceOptions {
  readonly db: Database;
  readonly pipelines: PipelineDirectory;
  readonly sources: SourceDirectory;
  /** Tells the worker of this process that work was queued. */
  readonly wake: () => void;
}

/** A change of an object in a bucket's internal object storage, after it committed. */
export interface ObjectChange {
  readonly orgId: string;
  readonly bucket: string;
  readonly key: string;
  readonly kind: "put" | "delete";
  readonly contentType: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_KEYS = 1000;
const RULES_PAGE = { fallback: 100, max: 1000 };
const JOBS_PAGE = { fallback: 50, max: 500 };

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
const notFound = (message: string) => new ConnectError(message, Code.NotFound);
const failedPrecondition = (message: string) => new ConnectError(message, Code.FailedPrecondition);

/**
 * The ingest service: rules binding a source to a pipeline, source syncs and ingest jobs. The API
 * only records and queues; the ingest worker of any process runs syncs and jobs.
 */
export function createIngestService(options: IngestServiceOptions): IngestServiceImplementation & {
  onObjectChanged(change: ObjectChange): Promise<void>;
} {
  const { db, pipelines, sources } = options;
  const rules = createRuleStore(db);
  const jobs = createJobStore(db);
  const syncs = createSyncStore(db);

  function checkId(field: string, value: string): string {
    if (value === "") throw invalid(`${field} is required`);
    if (!UUID.test(value)) throw invalid(`${field}: "${value}" is not a UUID`);
    return value.toLowerCase();
  }

  function bucketOf(bucket: string): string {
    if (bucket.trim() === "") throw invalid("bucket is required");
    return bucket;
  }

  async function pipelineOrThrow(orgId: string, bucket: string, pipelineId: string) {
    const pipeline = await pipelines.getPipeline(orgId, bucket, checkId("pipeline_id", pipelineId));
    if (!pipeline) throw notFound(`pipeline ${pipelineId} not found in bucket ${bucket}`);
    return pipeline;
  }

  async function sourceOrThrow(orgId: string, bucket: string, sourceId: string): Promise<string> {
    if (sourceId === "") return sources.internalSourceId(orgId, bucket);
    const id = checkId("source_id", sourceId);
    if (!(await sources.exists(orgId, bucket, id))) throw notFound(`source ${sourceId} not found in bucket ${bucket}`);
    return id;
  }

  async function ruleOrThrow(orgId: string, bucket: string, ruleId: string): Promise<RuleRow> {
    const rule = await rules.get(orgId, bucket, checkId("rule_id", ruleId));
    if (!rule) throw notFound(`rule ${ruleId} not found in bucket ${bucket}`);
    return rule;
  }

  /** `<source> -> <template> (<facet>: <destination>)`, or "" when the pipeline is gone. */
  async function bindingOf(rule: RuleRow): Promise<string> {
    const pipeline = await pipelines.getPipeline(rule.orgId, rule.bucket, rule.pipelineId);
    if (!pipeline) return "";
    return `${rule.name} -> ${pipeline.templateId} (${pipeline.facet}: ${pipeline.destinationName})`;
  }

  function triggerOf(value: RuleTrigger): RuleTriggerName {
    if (value === RuleTrigger.UNSPECIFIED) return "on_change";
    const name = nameOf(TRIGGERS, value);
    if (!name) throw invalid(`trigger: ${value} is not a RuleTrigger`);
    return name;
  }

  /** The cron expression and next run of a trigger, checked together. */
  function scheduleOf(trigger: RuleTriggerName, cron: string): { scheduleCron: string; nextRunAt: number } {
    if (trigger !== "schedule") {
      if (cron !== "") throw invalid("schedule_cron is only allowed with RULE_TRIGGER_SCHEDULE");
      return { scheduleCron: "", nextRunAt: 0 };
    }
    if (cron.trim() === "") throw invalid("schedule_cron is required with RULE_TRIGGER_SCHEDULE");
    try {
      return { scheduleCron: cron.trim(), nextRunAt: nextCronTime(cron, Date.now()) };
    } catch (error) {
      if (error instanceof CronSyntaxError) throw invalid(`schedule_cron: "${cron}" ${error.message}`);
      throw error;
    }
  }

  function filterOf(filter: { prefix: string; contentTypes: string[] } | undefined) {
    const contentTypes = filter?.contentTypes ?? [];
    contentTypes.forEach((value, i) => {
      const problem = contentTypeProblem(value);
      if (problem) throw invalid(`filter.content_types[${i}]: ${problem}`);
    });
    return { filterPrefix: filter?.prefix ?? "", filterContentTypes: contentTypes };
  }

  const overHttp = (context: HandlerContext) => context.protocolName === "http";

  const service = {
    async createRule(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const pipeline = await pipelineOrThrow(orgId, bucket, request.pipelineId);
      const sourceId = await sourceOrThrow(orgId, bucket, request.sourceId);
      const trigger = triggerOf(request.trigger);
      const row = await rules.insert(orgId, {
        id: randomUUID(),
        bucket,
        name: request.name.trim() === "" ? `${pipeline.destinationName || pipeline.templateId}` : request.name.trim(),
        sourceId,
        pipelineId: pipeline.pipelineId,
        trigger,
        ...scheduleOf(trigger, request.scheduleCron),
        ...filterOf(request.filter),
        paused: request.paused,
      });
      return ruleMessage(row, await bindingOf(row));
    },

    async getRule(request, context) {
      const { orgId } = principalOf(context);
      const rule = await ruleOrThrow(orgId, bucketOf(request.bucket), request.ruleId);
      return ruleMessage(rule, await bindingOf(rule));
    },

    async listRules(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const filter = {
        ...(request.sourceId ? { sourceId: request.sourceId } : {}),
        ...(request.pipelineId ? { pipelineId: request.pipelineId } : {}),
      };
      // Over HTTP every matching rule returns in one response; pages exist over gRPC only.
      if (overHttp(context)) {
        const rows = await rules.list(orgId, bucket, filter);
        return {
          rules: await Promise.all(rows.map(async (r) => ruleMessage(r, await bindingOf(r)))),
          nextPageToken: "",
        };
      }
      const limit = pageSizeOf(request.pageSize, RULES_PAGE);
      const afterId = decodePageToken("rules", request.pageToken);
      const rows = await rules.list(orgId, bucket, { ...filter, ...(afterId ? { afterId } : {}), limit: limit + 1 });
      const page = rows.slice(0, limit);
      return {
        rules: await Promise.all(page.map(async (r) => ruleMessage(r, await bindingOf(r)))),
        nextPageToken: rows.length > limit ? encodePageToken("rules", page.at(-1)!.id) : "",
      };
    },

    async updateRule(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const current = await ruleOrThrow(orgId, bucket, request.ruleId);
      const change: RuleChange = {};
      if (request.name !== undefined) {
        if (request.name.trim() === "") throw invalid("name must not be blank");
        change.name = request.name.trim();
      }
      if (request.pipelineId !== undefined)
        change.pipelineId = (await pipelineOrThrow(orgId, bucket, request.pipelineId)).pipelineId;
      const trigger = request.trigger !== undefined ? triggerOf(request.trigger) : current.trigger;
      if (request.trigger !== undefined || request.scheduleCron !== undefined) {
        const cron = request.scheduleCron ?? (trigger === "schedule" ? current.scheduleCron : "");
        Object.assign(change, { trigger, ...scheduleOf(trigger, cron) });
      }
      if (request.filter) Object.assign(change, filterOf(request.filter));
      if (request.paused !== undefined) change.paused = request.paused;
      const row = await rules.update(orgId, bucket, current.id, change);
      if (!row) throw notFound(`rule ${request.ruleId} not found in bucket ${bucket}`);
      return ruleMessage(row, await bindingOf(row));
    },

    async deleteRule(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      if (!(await rules.delete(orgId, bucket, checkId("rule_id", request.ruleId))))
        throw notFound(`rule ${request.ruleId} not found in bucket ${bucket}`);
      return {};
    },

    async triggerDiscovery(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const sourceId = await sourceOrThrow(orgId, bucket, checkId("source_id", request.sourceId));
      const run = await syncs.queue(orgId, { id: randomUUID(), bucket, sourceId, kind: "discovery" });
      if (!run) throw failedPrecondition(`a sync run of source ${sourceId} is already in progress`);
      options.wake();
      return syncRunMessage(run);
    },

    async triggerIngestion(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const sourceId = await sourceOrThrow(orgId, bucket, checkId("source_id", request.sourceId));
      const ruleIds = request.ruleIds.map((id, i) => checkId(`rule_ids[${i}]`, id));
      const active = await rules.active(orgId, bucket, sourceId, ["on_change", "schedule", "manual"]);
      for (const id of ruleIds) {
        if (!active.some((rule) => rule.id === id))
          throw notFound(`rule ${id} is not an unpaused rule of source ${sourceId}`);
      }
      if (active.length === 0) throw failedPrecondition(`no unpaused rule uses source ${sourceId}`);
      const run = await syncs.queue(orgId, {
        id: randomUUID(),
        bucket,
        sourceId,
        kind: "ingestion",
        ruleIds,
        fullResync: request.fullResync,
      });
      if (!run) throw failedPrecondition(`a sync run of source ${sourceId} is already in progress`);
      options.wake();
      return syncRunMessage(run);
    },

    async getSyncStatus(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const sourceId = await sourceOrThrow(orgId, bucket, checkId("source_id", request.sourceId));
      const [discovery, ingestion, scheduled] = await Promise.all([
        syncs.latest(orgId, bucket, sourceId, "discovery"),
        syncs.latest(orgId, bucket, sourceId, "ingestion"),
        rules.active(orgId, bucket, sourceId, ["schedule"]),
      ]);
      const next = scheduled.map((rule) => rule.nextRunAt).filter((at) => at > 0);
      return create(SyncStatusSchema, {
        sourceId,
        ...(discovery ? { lastDiscovery: syncRunMessage(discovery) } : {}),
        ...(ingestion ? { lastIngestion: syncRunMessage(ingestion) } : {}),
        nextScheduledAt: BigInt(next.length > 0 ? Math.min(...next) : 0),
      });
    },

    async triggerIngest(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const rule = await ruleOrThrow(orgId, bucket, request.ruleId);
      if (rule.paused) throw failedPrecondition(`rule ${rule.id} is paused`);
      if (!(await pipelines.getPipeline(orgId, bucket, rule.pipelineId)))
        throw failedPrecondition(`the pipeline of rule ${rule.id} (${rule.pipelineId}) no longer exists`);
      if (request.keys.length > MAX_KEYS) throw invalid(`keys: at most ${MAX_KEYS} keys, got ${request.keys.length}`);
      request.keys.forEach((key, i) => {
        if (key === "") throw invalid(`keys[${i}] is empty`);
      });
      const keys = [...new Set(request.keys)].filter((key) => key.startsWith(rule.filterPrefix));
      const base = { id: randomUUID(), bucket, ruleId: rule.id, pipelineId: rule.pipelineId, sourceId: rule.sourceId };
      const job =
        request.keys.length > 0
          ? await jobs.create(orgId, {
              ...base,
              selection: { keys, force: request.force },
              objects: keys.map((key) => ({ key, change: "put" as const })),
            })
          : await jobs.create(orgId, { ...base, selection: { prefix: request.prefix, force: request.force } });
      options.wake();
      return jobMessage(job);
    },

    async getIngestStatus(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const job = await jobs.get(orgId, bucket, checkId("job_id", request.jobId));
      if (!job) throw notFound(`ingest job ${request.jobId} not found in bucket ${bucket}`);
      return jobMessage(job);
    },

    async listIngestJobs(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const status = request.status === IngestJobStatus.UNSPECIFIED ? undefined : nameOf(JOB_STATUSES, request.status);
      if (request.status !== IngestJobStatus.UNSPECIFIED && !status)
        throw invalid(`status: ${request.status} is not an IngestJobStatus`);
      const filters = `${request.pipelineId}|${request.ruleId}|${request.status}`;
      const limit = pageSizeOf(request.pageSize, JOBS_PAGE);
      const cursor = decodePageToken(`ingest-jobs:${filters}`, request.pageToken);
      const [createdAt, id] = cursor === "" ? [] : cursor.split("/");
      if (cursor !== "" && (!UUID.test(id ?? "") || !/^\d+$/.test(createdAt ?? "")))
        throw invalid("page_token is malformed");
      const rows = await jobs.list(orgId, bucket, {
        ...(request.pipelineId ? { pipelineId: request.pipelineId } : {}),
        ...(request.ruleId ? { ruleId: request.ruleId } : {}),
        ...(status ? { status } : {}),
        ...(cursor !== "" ? { after: { createdAt: Number(createdAt), id: id! } } : {}),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        jobs: page.map(jobMessage),
        nextPageToken:
          rows.length > limit && last ? encodePageToken(`ingest-jobs:${filters}`, `${last.createdAt}/${last.id}`) : "",
      };
    },

    async retryIngestJob(request, context) {
      const { orgId } = principalOf(context);
      const bucket = bucketOf(request.bucket);
      const jobId = checkId("job_id", request.jobId);
      const retried = await jobs.retry(orgId, bucket, jobId);
      if (retried) {
        options.wake();
        return jobMessage(retried);
      }
      const job = await jobs.get(orgId, bucket, jobId);
      if (!job) throw notFound(`ingest job ${request.jobId} not found in bucket ${bucket}`);
      throw failedPrecondition(`ingest job ${jobId} is ${job.status}, not failed or partially failed`);
    },
  } satisfies IngestServiceImplementation;

  /**
   * Object writes and deletions in a bucket's internal storage, for its on-change rules: each
   * matching rule gets the change added to its queued job, or a new job when none is waiting.
   */
  async function onObjectChanged(change: ObjectChange): Promise<void> {
    // The actions service's run manifests and outputs are its own records, not data to ingest.
    if (change.key.startsWith(SERVICE_OWNED_PREFIX)) return;
    const sourceId = await sources.internalSourceId(change.orgId, change.bucket);
    const matching = (await rules.active(change.orgId, change.bucket, sourceId, ["on_change"])).filter(
      (rule) =>
        change.kind === "delete" ||
        matchesFilter({ prefix: rule.filterPrefix, contentTypes: rule.filterContentTypes }, change),
    );
    for (const rule of matching) {
      if (change.kind === "delete" && !change.key.startsWith(rule.filterPrefix)) continue;
      const objects = [{ key: change.key, change: change.kind }];
      const joined = await jobs.joinQueued(change.orgId, rule.id, objects);
      if (!joined) {
        await jobs.create(change.orgId, {
          id: randomUUID(),
          bucket: change.bucket,
          ruleId: rule.id,
          pipelineId: rule.pipelineId,
          sourceId,
          selection: {},
          objects,
        });
      }
    }
    if (matching.length > 0) options.wake();
  }

  return { ...service, onObjectChanged };
}
