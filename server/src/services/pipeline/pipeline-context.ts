import type { HandlerContext } from "@connectrpc/connect";
import type { Destination } from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import { principalOf } from "../../auth/principal.js";
import type { Database } from "../../db/database.js";
import { invalid, notFound, requireText } from "./pipeline-messages.js";
import { createPipelineStore, type PipelineStore } from "./pipeline-store.js";
import type { TemplateSource } from "./template-facts.js";

/** Whether a bucket exists in an organization. Buckets belong to the storage service. */
export interface BucketDirectory {
  exists(orgId: string, bucket: string): Promise<boolean>;
}

/**
 * The ingest service's part of a teardown: it deletes one of its rules inside the caller's
 * transaction and answers whether the rule existed. Rules live in the ingest service; until it
 * registers this, a rule reference is reported as already gone.
 */
export interface RuleArtifacts {
  deleteRule(db: Database, orgId: string, bucket: string, ruleId: string): Promise<boolean>;
}

/**
 * The data plane's part of a teardown with `drop_data`: drops the physical collection or table of
 * a deleted destination. Called after the catalog rows are gone (a failure leaves an orphan to
 * drop again, never a row without its data); until the engine registers it, the data stays, as
 * with DeletePipeline.
 */
export interface DestinationData {
  drop(orgId: string, destination: Destination): Promise<void>;
}

export interface PipelineServiceOptions {
  readonly db: Database;
  /** The script service (its generated interface): template contracts and the template catalog. */
  readonly templates: TemplateSource;
  readonly buckets: BucketDirectory;
  /**
   * The model id a new collection records for its template's embed model: the embedder that will
   * actually embed its chunks and queries (the operator's endpoint, or the local one standing in).
   * FAILED_PRECONDITION when nothing can embed that modality. Absent: the template's model as is.
   */
  readonly embedModelOf?: (templateModel: string, modality: string) => string;
  /** Rule deletion for BatchDeleteArtifacts; absent until the ingest service provides it. */
  readonly rules?: RuleArtifacts;
  /** Physical data removal for BatchDeleteArtifacts `drop_data`; absent until the engine provides it. */
  readonly data?: DestinationData;
  /** Called when the best-effort search pipeline of a collection could not be written. */
  readonly warn?: (message: string, fields: Record<string, unknown>) => void;
}

/** What every method starts from: the caller's organization and a checked, existing bucket. */
export interface Scope {
  readonly orgId: string;
  readonly bucket: string;
}

export interface PipelineDeps extends PipelineServiceOptions {
  readonly store: PipelineStore;
  scope(bucket: string, context: HandlerContext): Promise<Scope>;
}

export function createPipelineDeps(options: PipelineServiceOptions): PipelineDeps {
  return {
    ...options,
    store: createPipelineStore(options.db),
    async scope(bucket, context) {
      const { orgId } = principalOf(context);
      const name = requireText(bucket, "bucket", 255);
      if (name.includes("/")) throw invalid("bucket", "must not contain '/'");
      if (!(await options.buckets.exists(orgId, name))) throw notFound(`bucket "${name}"`);
      return { orgId, bucket: name };
    },
  };
}
