import { create, fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  DestinationSchema,
  DestinationStatus,
  ObjectConfigSchema,
  PipelineFacet,
  PipelineSchema,
  TableConfigSchema,
  VectorConfigSchema,
  type Destination,
  type ObjectConfig,
  type Pipeline,
  type TableConfig,
  type VectorConfig,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type { StoredFacet } from "./pipeline-schema.js";
import type { DestinationRow, PipelineRow } from "./pipeline-store.js";

/** Rows to contract messages, and the request checks every method shares. */

const FACETS: Record<StoredFacet, PipelineFacet> = {
  vector: PipelineFacet.VECTOR,
  table: PipelineFacet.TABLE,
  object: PipelineFacet.OBJECT,
  graph: PipelineFacet.GRAPH,
};

export function toPipeline(row: PipelineRow): Pipeline {
  return create(PipelineSchema, {
    pipelineId: row.id,
    bucket: row.bucket,
    name: row.name,
    scriptTemplate: row.scriptTemplate,
    options: isObject(row.options as JsonValue) ? (row.options as JsonObject) : undefined,
    createdAt: BigInt(row.createdAt),
    updatedAt: BigInt(row.updatedAt),
    destination: row.destination ? toDestination(row.destination) : undefined,
  });
}

export function toDestination(row: DestinationRow): Destination {
  const destination = create(DestinationSchema, {
    storeEntityId: row.id,
    facet: FACETS[row.facet],
    name: row.name,
    description: row.description,
    status: row.status === "error" ? DestinationStatus.ERROR : DestinationStatus.ACTIVE,
    engineId: row.engineId,
  });
  const config = row.config as JsonValue;
  switch (row.facet) {
    case "vector":
      destination.config = { case: "vector", value: vectorConfigOf(row) };
      break;
    case "table":
      destination.config = { case: "table", value: fromJson(TableConfigSchema, config ?? {}, lenient) };
      break;
    case "object":
      destination.config = { case: "object", value: fromJson(ObjectConfigSchema, config ?? {}, lenient) };
      break;
  }
  return destination;
}

/** A vector destination's stored config. */
export function vectorConfigOf(row: DestinationRow): VectorConfig {
  return fromJson(VectorConfigSchema, (row.config as JsonValue) ?? {}, lenient);
}

/** Stored configs are written by this service from the contract's JSON; newer fields are kept, unknown ones skipped. */
const lenient = { ignoreUnknownFields: true };

export const storeVectorConfig = (config: VectorConfig): JsonValue => toJson(VectorConfigSchema, config);
export const storeTableConfig = (config: TableConfig): JsonValue => toJson(TableConfigSchema, config);
export const storeObjectConfig = (config: ObjectConfig): JsonValue => toJson(ObjectConfigSchema, config);

/**
 * A facet filter: `vector`, `table`, `object` or `graph` in any case (the enum's names are taken
 * too); empty is no filter; anything else is INVALID_ARGUMENT naming `facet`, never "no filter".
 */
export function parseFacet(text: string, field = "facet"): StoredFacet | undefined {
  const value = text
    .trim()
    .toLowerCase()
    .replace(/^pipeline_facet_/, "");
  if (value === "" || value === "unspecified") return undefined;
  if (value in FACETS) return value as StoredFacet;
  throw invalid(field, `unknown facet "${text}"; expected vector, table, object or graph`);
}

/** The facet of a PipelineFacet value, as stored. */
export function facetOf(value: PipelineFacet): StoredFacet | undefined {
  return (Object.keys(FACETS) as StoredFacet[]).find((key) => FACETS[key] === value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id field: present and a UUID, else INVALID_ARGUMENT naming it. Lower-cased, as stored. */
export function requireUuid(value: string, field: string): string {
  if (value === "") throw invalid(field, "is required");
  if (!UUID.test(value)) throw invalid(field, `"${truncate(value)}" is not a UUID`);
  return value.toLowerCase();
}

/** A required text field, trimmed; blank is INVALID_ARGUMENT naming it. */
export function requireText(value: string, field: string, maxLength = 255): string {
  const text = value.trim();
  if (text === "") throw invalid(field, "is required");
  if (text.length > maxLength) throw invalid(field, `is longer than ${maxLength} characters`);
  return text;
}

export function invalid(field: string, message: string): ConnectError {
  return new ConnectError(`${field}: ${message}`, Code.InvalidArgument);
}

export function notFound(what: string): ConnectError {
  return new ConnectError(`${what} not found`, Code.NotFound);
}

function truncate(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);
}
