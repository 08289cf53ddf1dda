import { isUniqueViolation } from "../../db/sql-state.js";
import { create, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Pipeline } from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import { VectorConfigSchema } from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { UpdatePipelineRequest } from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { PipelineDeps } from "./pipeline-context.js";
import { checkObjectConfig, checkTableConfig } from "./pipeline-creators.js";
import {
  invalid,
  notFound,
  requireText,
  requireUuid,
  storeObjectConfig,
  storeTableConfig,
  storeVectorConfig,
  toPipeline,
  vectorConfigOf,
} from "./pipeline-messages.js";
import type { DestinationRow } from "./pipeline-store.js";
import { createPipelineStore } from "./pipeline-store.js";
import { fetchTemplate, inputsSchemaOf, validateTemplateInputs } from "./template-facts.js";

/**
 * UpdatePipeline: renames the pipeline, replaces its options, and edits its destination in place
 * (name, description, the facet's editable config). Everything is checked before anything is
 * written, then written in one transaction. The facet never changes: a config of another facet is
 * INVALID_ARGUMENT, a destination block on a free pipeline FAILED_PRECONDITION.
 */
export function createPipelineUpdater(deps: PipelineDeps) {
  async function destinationChanges(
    destination: DestinationRow | undefined,
    edit: NonNullable<UpdatePipelineRequest["destination"]>,
    pipelineId: string,
    context: HandlerContext,
  ) {
    if (!destination) {
      throw new ConnectError(
        `destination: pipeline "${pipelineId}" is free (it has no destination), so it has no destination to edit`,
        Code.FailedPrecondition,
      );
    }
    const changes: { name?: string; description?: string; config?: JsonValue } = {};
    if (edit.name !== undefined) changes.name = requireText(edit.name, "destination.name");
    if (edit.description !== undefined) changes.description = edit.description;
    const config = edit.config;
    if (config.case !== undefined && config.case !== destination.facet) {
      throw invalid(
        `destination.${config.case}`,
        `the destination has the ${destination.facet} facet, which cannot change; send a ${destination.facet} config or none`,
      );
    }
    switch (config.case) {
      case "vector": {
        const current = vectorConfigOf(destination);
        if (config.value.templateInputs !== undefined) {
          const template = await fetchTemplate(deps.templates, current.templateId, context);
          const schema = template ? inputsSchemaOf(template) : undefined;
          if (!schema) {
            throw new ConnectError(
              `template "${current.templateId}" of the collection has no contract any more; its inputs cannot be edited`,
              Code.FailedPrecondition,
            );
          }
          validateTemplateInputs(schema, config.value.templateInputs, "destination.vector.template_inputs");
          const next = create(VectorConfigSchema, { ...current, templateInputs: config.value.templateInputs });
          changes.config = storeVectorConfig(next);
        }
        break;
      }
      case "table":
        changes.config = storeTableConfig(
          checkTableConfig(config.value, changes.name ?? destination.name, "destination.table"),
        );
        break;
      case "object":
        changes.config = storeObjectConfig(
          checkObjectConfig(config.value, changes.name ?? destination.name, "destination.object"),
        );
        break;
    }
    return changes;
  }

  return {
    async updatePipeline(request: UpdatePipelineRequest, context: HandlerContext): Promise<Pipeline> {
      const scope = await deps.scope(request.bucket, context);
      const id = requireUuid(request.pipelineId, "pipeline_id");
      const current = await deps.store.getPipeline(scope.orgId, scope.bucket, id);
      if (!current) throw notFound(`pipeline "${id}"`);
      const pipelineChanges: { name?: string; options?: JsonValue } = {};
      if (request.name !== undefined) pipelineChanges.name = requireText(request.name, "name");
      if (request.options !== undefined) pipelineChanges.options = request.options;
      const destination = request.destination
        ? await destinationChanges(current.destination, request.destination, id, context)
        : undefined;
      try {
        const row = await deps.db.transaction(async (tx) => {
          const store = createPipelineStore(tx);
          if (Object.keys(pipelineChanges).length > 0) {
            if (!(await store.updatePipeline(scope.orgId, scope.bucket, id, pipelineChanges))) {
              throw notFound(`pipeline "${id}"`);
            }
          }
          if (destination && current.destination && Object.keys(destination).length > 0) {
            await store.updateDestination(scope.orgId, scope.bucket, current.destination.id, destination);
          }
          return store.getPipeline(scope.orgId, scope.bucket, id);
        });
        if (!row) throw notFound(`pipeline "${id}"`);
        return toPipeline(row);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new ConnectError(
            `destination.name: a ${current.destination?.facet ?? ""} destination named "${destination?.name ?? ""}" already exists in the bucket`,
            Code.AlreadyExists,
          );
        }
        throw error;
      }
    },
  };
}
