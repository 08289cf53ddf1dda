import type { HandlerContext } from "@connectrpc/connect";
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

export interface PipelineServiceOptions {
  readonly db: Database;
  /** The script service (its generated interface): template contracts and the template catalog. */
  readonly templates: TemplateSource;
  readonly buckets: BucketDirectory;
  /** Rule deletion for BatchDeleteArtifacts; absent until the ingest service provides it. */
  readonly rules?: RuleArtifacts;
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
