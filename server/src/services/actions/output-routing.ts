import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  OutputKind,
  SiblingFileRefSchema,
  VectorChunksRefSchema,
  WarehouseRowsRefSchema,
  type ActionRunManifest,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { ActionDefinition } from "./action-definition.js";
import type { ActionDispatch } from "./action-runner.js";
import type { ActionsPorts, ChunkVector, TableColumn } from "./actions-ports.js";
import { siblingKey } from "./run-keys.js";

/**
 * Where a completed run's output goes, by the action's route (inline, file,
 * table, chunks), and what the `completed` event carries: the template's whole output, except that
 * the table route's `rows` and the chunks route's `vectors` are replaced by `row_count` and
 * `chunk_count` (the data is in the table or collection; the stream need not carry it twice).
 */

/** Largest inline output kept in the manifest, as its JSON text. */
export const MAX_INLINE_BYTES = 16 * 1024;
/** Most chunks ids a manifest lists (the count is always exact). */
const MAX_LISTED_CHUNK_IDS = 1000;

export type OutputLocation = ActionRunManifest["outputLocation"];

export interface RoutedOutput {
  readonly location: OutputLocation;
  readonly kind: OutputKind;
  /** The `completed` event's output. */
  readonly eventOutput: JsonObject;
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function outputKindOf(action: ActionDefinition): OutputKind {
  const kind = OutputKind[action.output.kind as keyof typeof OutputKind];
  return typeof kind === "number" ? kind : OutputKind.JSON;
}

const CONTENT_TYPES: Record<string, string> = {
  txt: "text/plain; charset=utf-8",
  md: "text/markdown; charset=utf-8",
  json: "application/json",
  csv: "text/csv; charset=utf-8",
  jsonl: "application/x-ndjson",
  html: "text/html; charset=utf-8",
};

export function contentTypeOfExtension(extension: string): string {
  return CONTENT_TYPES[extension] ?? "application/octet-stream";
}

const runFailure = (message: string) => new ConnectError(message, Code.FailedPrecondition);

export async function routeOutput(
  ports: ActionsPorts,
  action: ActionDefinition,
  dispatch: ActionDispatch,
  output: JsonValue,
): Promise<RoutedOutput> {
  const kind = outputKindOf(action);
  const whole: JsonObject = isObject(output) ? output : { value: output };
  const { orgId, bucket } = dispatch;
  const route = action.output.route;
  if (kind === OutputKind.NONE) return { kind, location: { case: undefined }, eventOutput: whole };

  if (route === "inline") {
    const field = action.output.field;
    const value: JsonValue = field ? (whole[field] ?? null) : whole;
    const json = JSON.stringify(value);
    if (Buffer.byteLength(json) <= MAX_INLINE_BYTES)
      return { kind, location: { case: "outputInline", value: fromJson(ValueSchema, value) }, eventOutput: whole };
    const textual = (kind === OutputKind.TEXT || kind === OutputKind.MARKDOWN) && typeof value === "string";
    const extension = action.output.extension ?? (textual ? (kind === OutputKind.MARKDOWN ? "md" : "txt") : "json");
    const body = textual ? (value as string) : json;
    return { kind, location: await sibling(ports, dispatch, extension, body), eventOutput: whole };
  }

  if (route === "file") {
    const content = whole["content"];
    if (typeof content !== "string") throw runFailure("the action's script produced no string `content` to store");
    const extension = action.output.extension ?? "txt";
    const type = typeof whole["content_type"] === "string" ? whole["content_type"] : undefined;
    return { kind, location: await sibling(ports, dispatch, extension, content, type), eventOutput: whole };
  }

  if (route === "table") {
    const tables = ports.tables;
    if (!tables) throw runFailure("warehouse tables are not served by this server");
    const rows = whole["rows"];
    if (!Array.isArray(rows) || !rows.every(isObject))
      throw runFailure("the action's script produced no `rows` to store");
    const tableName = dispatch.params["table_name"];
    if (typeof tableName !== "string" || tableName === "") throw runFailure("params.table_name is required");
    const declared = Array.isArray(whole["columns"])
      ? (whole["columns"].filter(isObject) as unknown as TableColumn[])
      : [];
    const rowCount = await tables.load(orgId, bucket, tableName, rows, {
      mode: "append",
      create: dispatch.params["replace"] === true ? "replace" : "if_missing",
      ...(declared.length > 0 ? { columns: declared } : {}),
    });
    const { rows: _rows, ...rest } = whole;
    return {
      kind,
      location: {
        case: "warehouseRows",
        value: create(WarehouseRowsRefSchema, { bucket, tableName, rowCount: BigInt(rowCount) }),
      },
      eventOutput: { ...rest, row_count: rowCount },
    };
  }

  if (route === "chunks") {
    const vectors = whole["vectors"];
    if (!Array.isArray(vectors) || !vectors.every(isObject))
      throw runFailure("the action's script produced no `vectors` to store");
    const collection = dispatch.params["collection"];
    if (typeof collection !== "string" || collection === "") throw runFailure("params.collection is required");
    const selection = dispatch.selection.shape;
    const sourceKey = selection.case === "objectSingle" ? selection.value.key : `_actions/runs/${dispatch.runId}`;
    const ids = await ports.vectors.replaceObject(
      orgId,
      bucket,
      collection,
      sourceKey,
      vectors as unknown as ChunkVector[],
    );
    const { vectors: _vectors, ...rest } = whole;
    return {
      kind,
      location: {
        case: "vectorChunks",
        value: create(VectorChunksRefSchema, {
          bucket,
          collection,
          chunkIds: ids.slice(0, MAX_LISTED_CHUNK_IDS),
          chunkCount: BigInt(ids.length),
        }),
      },
      eventOutput: { ...rest, chunk_count: ids.length },
    };
  }
  throw runFailure(`the action's output route ${route} is not known`);
}

async function sibling(
  ports: ActionsPorts,
  dispatch: ActionDispatch,
  extension: string,
  body: string,
  contentType = contentTypeOfExtension(extension),
): Promise<OutputLocation> {
  const key = siblingKey(dispatch.reverseTs, dispatch.runId, extension);
  const bytes = Buffer.from(body, "utf8");
  await ports.objects.put(dispatch.orgId, dispatch.bucket, key, bytes, contentType);
  return {
    case: "siblingFile",
    value: create(SiblingFileRefSchema, { key, contentType, sizeBytes: BigInt(bytes.length) }),
  };
}
