import { create } from "@bufbuild/protobuf";
import { type HandlerContext } from "@connectrpc/connect";
import {
  ArtifactDeleteOutcome,
  ArtifactDeleteResultSchema,
  ArtifactKind,
  BatchDeleteArtifactsResponseSchema,
  type ArtifactRef,
  type BatchDeleteArtifactsRequest,
  type BatchDeleteArtifactsResponse,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { PipelineDeps } from "./pipeline-context.js";
import { invalid, requireText, requireUuid } from "./pipeline-messages.js";
import { createPipelineStore } from "./pipeline-store.js";

/** Most references one BatchDeleteArtifacts call takes. */
export const MAX_ARTIFACTS = 100;

/** Deletion order: rules first (they point at pipelines), then pipelines, then destinations. */
const ORDER: Record<number, number> = {
  [ArtifactKind.RULE]: 0,
  [ArtifactKind.PIPELINE]: 1,
  [ArtifactKind.DESTINATION]: 2,
};

/**
 * BatchDeleteArtifacts: every reference is checked first, then all are deleted in dependency
 * order in one transaction. A reference already gone is a skipped success, so a retried teardown
 * succeeds. Rules are deleted by the ingest service through `RuleArtifacts`; without it a rule
 * reference is reported skipped.
 */
export function createArtifactDeleter(deps: PipelineDeps) {
  return {
    async batchDeleteArtifacts(
      request: BatchDeleteArtifactsRequest,
      context: HandlerContext,
    ): Promise<BatchDeleteArtifactsResponse> {
      const scope = await deps.scope(request.bucket, context);
      if (request.artifacts.length > MAX_ARTIFACTS) {
        throw invalid("artifacts", `at most ${MAX_ARTIFACTS} references per call, got ${request.artifacts.length}`);
      }
      const refs = request.artifacts.map((artifact, index) => checkRef(artifact, index));
      const ordered = refs
        .map((ref, index) => ({ ref, index }))
        .sort((a, b) => ORDER[a.ref.kind]! - ORDER[b.ref.kind]! || a.index - b.index)
        .map(({ ref }) => ref);
      const results = await deps.db.transaction(async (tx) => {
        const store = createPipelineStore(tx);
        const outcomes = [];
        for (const ref of ordered) {
          let deleted: boolean;
          switch (ref.kind) {
            case ArtifactKind.RULE:
              deleted = (await deps.rules?.deleteRule(tx, scope.orgId, scope.bucket, ref.id)) ?? false;
              break;
            case ArtifactKind.PIPELINE:
              deleted = await store.deletePipeline(scope.orgId, scope.bucket, ref.id);
              break;
            default:
              deleted = await store.deleteDestination(scope.orgId, scope.bucket, ref.id);
          }
          outcomes.push(
            create(ArtifactDeleteResultSchema, {
              artifact: ref,
              outcome: deleted ? ArtifactDeleteOutcome.DELETED : ArtifactDeleteOutcome.SKIPPED,
            }),
          );
        }
        return outcomes;
      });
      return create(BatchDeleteArtifactsResponseSchema, { results });
    },
  };
}

function checkRef(ref: ArtifactRef, index: number): ArtifactRef {
  const field = `artifacts[${index}]`;
  switch (ref.kind) {
    case ArtifactKind.PIPELINE:
    case ArtifactKind.DESTINATION:
      return { ...ref, id: requireUuid(ref.id, `${field}.id`) };
    case ArtifactKind.RULE:
      return { ...ref, id: requireText(ref.id, `${field}.id`) };
    default:
      throw invalid(`${field}.kind`, "must be ARTIFACT_KIND_DESTINATION, ARTIFACT_KIND_PIPELINE or ARTIFACT_KIND_RULE");
  }
}
