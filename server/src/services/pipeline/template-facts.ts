import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { ValidateFunction } from "ajv";
import { DistanceMetric, EmbeddingType, SparseMode } from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { TemplateInfo } from "../../../../gen/platform/script/v1/catalog_pb.js";
import {
  GetTemplateRequestSchema,
  GetTemplateResponseSchema,
  ListTemplatesRequestSchema,
  ListTemplatesResponseSchema,
} from "../../../../gen/platform/script/v1/script_service_pb.js";
import type { ScriptServiceImplementation } from "../../../../gen/platform/script/v1/script_service_server.js";
import { compileSchema } from "../script/dsl/json-schema.js";

/**
 * What the pipeline catalog needs of the script service: its template catalog, called through the
 * generated service interface exactly as a remote caller would (the script service's own object
 * satisfies it in-process; a client adapter would do the same across processes).
 */
export type TemplateSource = Partial<Pick<ScriptServiceImplementation, "getTemplate" | "listTemplates">>;

/** Inputs an index pipeline sets per ingested object: never part of a collection's template_inputs. */
export const PER_OBJECT_INPUTS = ["text", "source_key", "mime_type", "extracted_at"] as const;

/** The schema-shaping facts an index template's contract declares. */
export interface VectorFacts {
  readonly embedModel: string;
  readonly dimensions: number;
  readonly distanceMetric: DistanceMetric;
  readonly sparseMode: SparseMode;
  readonly embeddingType: EmbeddingType;
  readonly modality: string;
  readonly chunkSize: number;
  readonly chunkOverlap: number;
}

/** Reads one template; NOT_FOUND stays NOT_FOUND, an unreachable script service is UNAVAILABLE. */
export async function fetchTemplate(
  source: TemplateSource,
  id: string,
  context: HandlerContext,
): Promise<TemplateInfo | undefined> {
  try {
    if (!source.getTemplate) throw new ConnectError("GetTemplate is not served", Code.Unimplemented);
    const answer = create(
      GetTemplateResponseSchema,
      await source.getTemplate(create(GetTemplateRequestSchema, { id }), context),
    );
    return answer.info;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw unreachable(error);
  }
}

/** Every template of the catalog (its pages read through), optionally by category and text. */
export async function fetchAllTemplates(
  source: TemplateSource,
  filter: { category: string; search: string },
  context: HandlerContext,
): Promise<TemplateInfo[]> {
  const templates: TemplateInfo[] = [];
  let pageToken = "";
  try {
    if (!source.listTemplates) throw new ConnectError("ListTemplates is not served", Code.Unimplemented);
    // Bounded: the catalog is small, and a token that never ends must not loop for ever.
    for (let page = 0; page < 100; page++) {
      const answer = create(
        ListTemplatesResponseSchema,
        await source.listTemplates!(
          create(ListTemplatesRequestSchema, { ...filter, pageSize: 200, pageToken }),
          context,
        ),
      );
      templates.push(...answer.templates);
      pageToken = answer.nextPageToken;
      if (pageToken === "") break;
    }
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.InvalidArgument) throw error;
    throw unreachable(error);
  }
  return templates;
}

function unreachable(cause: unknown): ConnectError {
  return new ConnectError(
    "the script service cannot be reached to fetch the template contract; retry later",
    Code.Unavailable,
    undefined,
    undefined,
    cause,
  );
}

/** The contract's `inputs` JSON Schema, or undefined when the template declares no contract. */
export function inputsSchemaOf(template: TemplateInfo): JsonObject | undefined {
  const inputs = template.contract?.inputs;
  if (!inputs || Object.keys(inputs).length === 0) return undefined;
  return inputs as JsonObject;
}

/** A template label's value, or "". */
export function labelOf(template: TemplateInfo, key: string): string {
  return template.labels.find((label) => label.key === key)?.value ?? "";
}

/**
 * The vector facts an index template's contract resolves: `embed_model` and `dimensions` are
 * `const` inputs; metric, sparse mode and embedding type are optional `const`/`default` inputs
 * (cosine, none and float when absent); chunking comes from the defaults of `chunk_size` and
 * `chunk_overlap`; the modality from the `type` label. Undefined when the contract resolves no
 * embed_model or no positive dimensions (not an index template).
 */
export function vectorFactsOf(template: TemplateInfo, inputs: JsonObject): VectorFacts | undefined {
  const properties = isObject(inputs["properties"]) ? inputs["properties"] : {};
  const fixed = (name: string): JsonValue | undefined => {
    const property = properties[name];
    if (!isObject(property)) return undefined;
    if (property["const"] !== undefined) return property["const"];
    const values = property["enum"];
    return Array.isArray(values) && values.length === 1 ? values[0] : undefined;
  };
  const declared = (name: string): JsonValue | undefined => {
    const property = properties[name];
    return fixed(name) ?? (isObject(property) ? property["default"] : undefined);
  };
  const embedModel = fixed("embed_model");
  const dimensions = fixed("dimensions");
  if (typeof embedModel !== "string" || embedModel === "") return undefined;
  if (typeof dimensions !== "number" || !Number.isInteger(dimensions) || dimensions <= 0) return undefined;
  const integer = (value: JsonValue | undefined) => (typeof value === "number" && Number.isInteger(value) ? value : 0);
  return {
    embedModel,
    dimensions,
    distanceMetric: enumByName(declared("distance_metric"), DISTANCE_METRICS) ?? DistanceMetric.COSINE,
    sparseMode: enumByName(declared("sparse_mode"), SPARSE_MODES) ?? SparseMode.NONE,
    embeddingType: enumByName(declared("embedding_type"), EMBEDDING_TYPES) ?? EmbeddingType.FLOAT,
    modality: labelOf(template, "type"),
    chunkSize: integer(declared("chunk_size")),
    chunkOverlap: integer(declared("chunk_overlap")),
  };
}

const DISTANCE_METRICS: Record<string, DistanceMetric> = {
  cosine: DistanceMetric.COSINE,
  euclidean: DistanceMetric.EUCLIDEAN,
  l2: DistanceMetric.EUCLIDEAN,
  dot_product: DistanceMetric.DOT_PRODUCT,
  ip: DistanceMetric.DOT_PRODUCT,
};
const SPARSE_MODES: Record<string, SparseMode> = {
  none: SparseMode.NONE,
  bm25: SparseMode.BM25,
  external: SparseMode.EXTERNAL,
};
const EMBEDDING_TYPES: Record<string, EmbeddingType> = {
  float: EmbeddingType.FLOAT,
  float32: EmbeddingType.FLOAT,
  int8: EmbeddingType.INT8,
  float16: EmbeddingType.FLOAT16,
  bfloat16: EmbeddingType.BFLOAT16,
  binary: EmbeddingType.BINARY,
};

function enumByName<E>(value: JsonValue | undefined, table: Record<string, E>): E | undefined {
  return typeof value === "string" ? table[value.toLowerCase()] : undefined;
}

/**
 * Checks `templateInputs` against the contract's inputs schema without the inputs a pipeline binds
 * per object, and answers INVALID_ARGUMENT naming `template_inputs` and the offending path.
 */
export function validateTemplateInputs(inputs: JsonObject, templateInputs: JsonObject, field: string): void {
  const validate = compiledInputs(inputs);
  if (validate(templateInputs)) return;
  const problems = (validate.errors ?? []).slice(0, 5).map((error) => {
    const at = error.instancePath === "" ? "" : error.instancePath.slice(1).replace(/\//g, ".");
    const missing = error.keyword === "required" ? String(error.params["missingProperty"]) : "";
    const where = [field, at, missing].filter(Boolean).join(".");
    return `${where}: ${error.message ?? "is invalid"}`;
  });
  throw new ConnectError(`template_inputs fails the template contract: ${problems.join("; ")}`, Code.InvalidArgument);
}

/** Compiled contracts by their inputs schema's text: a template's is compiled once, not per call. */
const compiledContracts = new Map<string, ValidateFunction>();
const MAX_COMPILED_CONTRACTS = 256;

/** The contract's inputs, less the per-object ones, compiled with the script service's dialects (2020-12 or draft-07). */
function compiledInputs(inputs: JsonObject): ValidateFunction {
  const schema = withoutPerObjectInputs(inputs);
  const text = JSON.stringify(schema);
  const cached = compiledContracts.get(text);
  if (cached) return cached;
  const { validate } = compileSchema(schema);
  if (!validate) throw new ConnectError("the template's contract cannot be applied", Code.FailedPrecondition);
  if (compiledContracts.size >= MAX_COMPILED_CONTRACTS) compiledContracts.clear();
  compiledContracts.set(text, validate);
  return validate;
}

function withoutPerObjectInputs(inputs: JsonObject): JsonObject {
  const schema: JsonObject = { ...inputs };
  if (isObject(schema["properties"])) {
    const properties: JsonObject = { ...schema["properties"] };
    for (const name of PER_OBJECT_INPUTS) delete properties[name];
    schema["properties"] = properties;
  }
  if (Array.isArray(schema["required"])) {
    schema["required"] = schema["required"].filter(
      (name) => !(PER_OBJECT_INPUTS as readonly JsonValue[]).includes(name),
    );
  }
  return schema;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);
}
