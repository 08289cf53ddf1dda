import { isUniqueViolation } from "../../db/sql-state.js";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { randomUUID } from "node:crypto";
import {
  EmbeddingSource,
  ObjectConfigSchema,
  TableConfigSchema,
  TableWriteMode,
  VectorConfigSchema,
  type ObjectConfig,
  type Pipeline,
  type TableConfig,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type {
  CreateObjectPipelineRequest,
  CreatePipelineRequest,
  CreateTablePipelineRequest,
  CreateVectorPipelineRequest,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { PipelineDeps, Scope } from "./pipeline-context.js";
import {
  invalid,
  notFound,
  requireText,
  requireUuid,
  storeObjectConfig,
  storeTableConfig,
  storeVectorConfig,
  toPipeline,
} from "./pipeline-messages.js";
import type { StoredFacet } from "./pipeline-schema.js";
import { createPipelineStore, type NewDestination } from "./pipeline-store.js";
import { fetchTemplate, inputsSchemaOf, labelOf, validateTemplateInputs, vectorFactsOf } from "./template-facts.js";

/** Prefix of generated physical collection names (`vc_<uuid hex>`): a valid SQL and Milvus identifier. */
export const PHYSICAL_NAME_PREFIX = "vc";

/**
 * The facet creators. Each writes its destination and pipeline in one transaction and contacts
 * no data plane: the physical collection or table is created on the first ingest. None writes an
 * ingest rule.
 */
export function createPipelineCreators(deps: PipelineDeps) {
  /** Template, contract and checked inputs of a facet creator's `template_id`. */
  async function resolveTemplate(templateId: string, inputs: JsonObject | undefined, context: HandlerContext) {
    const id = requireText(templateId, "template_id");
    const template = await fetchTemplate(deps.templates, id, context);
    if (!template) throw invalid("template_id", `unknown template "${id}"`);
    const schema = inputsSchemaOf(template);
    if (!schema) {
      throw new ConnectError(
        `template "${id}" has no ScriptContract to resolve the destination from`,
        Code.FailedPrecondition,
      );
    }
    validateTemplateInputs(schema, inputs ?? {}, "template_inputs");
    return { id, template, schema };
  }

  /** Writes a destination and the pipelines bound to it in one transaction. */
  async function writeDestination(
    scope: Scope,
    destination: Omit<NewDestination, "bucket">,
    templateId: string,
  ): Promise<Pipeline> {
    try {
      const row = await deps.db.transaction(async (tx) => {
        const store = createPipelineStore(tx);
        const written = await store.insertDestination(scope.orgId, { ...destination, bucket: scope.bucket });
        return store.insertPipeline(scope.orgId, {
          bucket: scope.bucket,
          name: templateId,
          scriptTemplate: templateId,
          options: null,
          destinationId: written.id,
        });
      });
      return toPipeline(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw alreadyExists(destination.facet, destination.name);
      throw error;
    }
  }

  async function refuseTakenName(scope: Scope, facet: StoredFacet, name: string): Promise<void> {
    if (await deps.store.findDestination(scope.orgId, scope.bucket, facet, name)) throw alreadyExists(facet, name);
  }

  return {
    async createVectorPipeline(request: CreateVectorPipelineRequest, context: HandlerContext): Promise<Pipeline> {
      const scope = await deps.scope(request.bucket, context);
      const name = requireText(request.name, "name");
      const { id, template, schema } = await resolveTemplate(request.templateId, request.templateInputs, context);
      const facts = vectorFactsOf(template, schema);
      if (!facts) {
        throw new ConnectError(
          `template "${id}" resolves no embed_model or no positive dimensions: it is not an index template`,
          Code.FailedPrecondition,
        );
      }
      await refuseTakenName(scope, "vector", name);
      const vector = create(VectorConfigSchema, {
        ...facts,
        embedModel: deps.embedModelOf ? deps.embedModelOf(facts.embedModel, facts.modality) : facts.embedModel,
        // The caller's chunking inputs (already checked against the contract) over the template's defaults.
        ...chunkingOf(request.templateInputs),
        enableBm25: false,
        embeddingSource: EmbeddingSource.PIPELINE,
        templateId: id,
        templateInputs: request.templateInputs ?? {},
        physicalName: `${PHYSICAL_NAME_PREFIX}_${randomUUID().replace(/-/g, "")}`,
      });
      const pipeline = await writeDestination(
        scope,
        { facet: "vector", name, description: request.description, config: storeVectorConfig(vector) },
        id,
      );
      await addSearchPipeline(scope, pipeline, labelOf(template, "search_template") || searchTemplateOf(id));
      return pipeline;
    },

    async createTablePipeline(request: CreateTablePipelineRequest, context: HandlerContext): Promise<Pipeline> {
      const scope = await deps.scope(request.bucket, context);
      const name = requireText(request.name, "name");
      const { id } = await resolveTemplate(request.templateId, request.templateInputs, context);
      const table = checkTableConfig(request.table ?? create(TableConfigSchema), name, "table");
      await refuseTakenName(scope, "table", name);
      return writeDestination(
        scope,
        { facet: "table", name, description: request.description, config: storeTableConfig(table) },
        id,
      );
    },

    async createObjectPipeline(request: CreateObjectPipelineRequest, context: HandlerContext): Promise<Pipeline> {
      const scope = await deps.scope(request.bucket, context);
      const name = requireText(request.name, "name");
      const { id } = await resolveTemplate(request.templateId, request.templateInputs, context);
      const object = checkObjectConfig(request.object ?? create(ObjectConfigSchema), name, "object");
      await refuseTakenName(scope, "object", name);
      return writeDestination(
        scope,
        { facet: "object", name, description: request.description, config: storeObjectConfig(object) },
        id,
      );
    },

    async createPipeline(request: CreatePipelineRequest, context: HandlerContext): Promise<Pipeline> {
      const scope = await deps.scope(request.bucket, context);
      const name = requireText(request.name, "name");
      const templateId = requireText(request.scriptTemplate, "script_template");
      const destinationId =
        request.storeEntityId === "" ? undefined : requireUuid(request.storeEntityId, "store_entity_id");
      if (!(await fetchTemplate(deps.templates, templateId, context))) {
        throw invalid("script_template", `unknown template "${templateId}"`);
      }
      if (destinationId && !(await deps.store.getDestination(scope.orgId, scope.bucket, destinationId))) {
        throw notFound(`destination "${destinationId}"`);
      }
      const row = await deps.store.insertPipeline(scope.orgId, {
        bucket: scope.bucket,
        name,
        scriptTemplate: templateId,
        options: request.options ?? null,
        destinationId,
      });
      return toPipeline(row);
    },
  };

  /**
   * The search-side pipeline of a collection, best effort: when it cannot be written the collection
   * still indexes, and search reports it as skipped.
   */
  async function addSearchPipeline(scope: Scope, index: Pipeline, searchTemplate: string): Promise<void> {
    if (searchTemplate === "" || searchTemplate === index.scriptTemplate) return;
    try {
      await deps.store.insertPipeline(scope.orgId, {
        bucket: scope.bucket,
        name: searchTemplate,
        scriptTemplate: searchTemplate,
        options: null,
        destinationId: index.destination!.storeEntityId,
      });
    } catch (error) {
      deps.warn?.("search pipeline not written", {
        bucket: scope.bucket,
        destination: index.destination!.storeEntityId,
        error,
      });
    }
  }
}

/** `text_embedding_index` -> `text_embedding_search`; "" when the id does not follow the convention. */
export function searchTemplateOf(indexTemplate: string): string {
  return indexTemplate.endsWith("_index") ? `${indexTemplate.slice(0, -"_index".length)}_search` : "";
}

function alreadyExists(facet: StoredFacet, name: string): ConnectError {
  return new ConnectError(`a ${facet} destination named "${name}" already exists in the bucket`, Code.AlreadyExists);
}

const SQL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A table config with its defaults applied: the table is named after the destination unless given. */
export function checkTableConfig(config: TableConfig, name: string, field: string): TableConfig {
  const tableName = config.tableName === "" ? name.replace(/[^A-Za-z0-9_]/g, "_").slice(0, 63) : config.tableName;
  if (!SQL_IDENTIFIER.test(tableName)) {
    throw invalid(`${field}.table_name`, "must be an SQL identifier (letters, digits, _) of at most 63 characters");
  }
  const writeMode = config.writeMode === TableWriteMode.UNSPECIFIED ? TableWriteMode.APPEND : config.writeMode;
  if (writeMode === TableWriteMode.UPSERT && config.primaryKey.length === 0) {
    throw invalid(`${field}.primary_key`, "is required with TABLE_WRITE_MODE_UPSERT");
  }
  for (const [index, column] of config.primaryKey.entries()) {
    if (!SQL_IDENTIFIER.test(column)) throw invalid(`${field}.primary_key[${index}]`, "must be an SQL identifier");
  }
  return create(TableConfigSchema, { tableName, writeMode, primaryKey: config.primaryKey });
}

const OBJECT_FORMATS = ["jsonl", "json", "parquet"];

/** An object output config with its defaults applied (`pipelines/<name>/`, jsonl). */
export function checkObjectConfig(config: ObjectConfig, name: string, field: string): ObjectConfig {
  const prefix = config.prefix === "" ? `pipelines/${name}/` : config.prefix;
  if (prefix.startsWith("/") || prefix.includes("..")) {
    throw invalid(`${field}.prefix`, "must be a relative key prefix without '..'");
  }
  const format = config.format === "" ? "jsonl" : config.format.toLowerCase();
  if (!OBJECT_FORMATS.includes(format)) throw invalid(`${field}.format`, "must be jsonl, json or parquet");
  return create(ObjectConfigSchema, { prefix, format });
}

function chunkingOf(inputs: { [key: string]: unknown } | undefined): { chunkSize?: number; chunkOverlap?: number } {
  const chunking: { chunkSize?: number; chunkOverlap?: number } = {};
  if (typeof inputs?.chunk_size === "number") chunking.chunkSize = inputs.chunk_size;
  if (typeof inputs?.chunk_overlap === "number") chunking.chunkOverlap = inputs.chunk_overlap;
  return chunking;
}
