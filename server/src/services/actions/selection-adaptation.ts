import { Code, ConnectError } from "@connectrpc/connect";
import type { Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import type { ActionDefinition } from "./action-definition.js";
import type { ActionsPorts, TableInfo } from "./actions-ports.js";

/**
 * A selection checked against the caller's organization: exactly one shape, its bucket and the
 * data it names exist, and every selected object's content type is known (the stored type, else
 * one guessed from the key, when the caller gave none).
 */

/** Selection oneof member names, as action definitions spell them. */
export const SHAPE_NAMES: Readonly<Record<string, string>> = {
  objectSingle: "object_single",
  objectsMulti: "objects_multi",
  collectionSingle: "collection_single",
  chunksMulti: "chunks_multi",
  tableSingle: "table_single",
  none: "none",
};

/** Most objects one objects_multi selection may name. */
export const MAX_SELECTED_OBJECTS = 100;
/** Bytes read of an object whose type neither its stored type nor its name tells. */
const SNIFFED_BYTES = 512;
/** Most chunks one chunks_multi selection may name. */
export const MAX_SELECTED_CHUNKS = 1000;

export interface SelectedObject {
  readonly key: string;
  readonly contentType: string;
  readonly size: number;
}

export interface ResolvedSelection {
  /** The oneof member name (object_single...). */
  readonly shape: string;
  readonly pillar: string;
  readonly bucket: string;
  /** object_single: one entry; objects_multi: the selected objects in order. */
  readonly objects: readonly SelectedObject[];
  readonly collection: string;
  readonly chunkIds: readonly string[];
  readonly table?: TableInfo | undefined;
}

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
export const notFound = (message: string) => new ConnectError(message, Code.NotFound);

/** The shape's name and bucket; INVALID_ARGUMENT naming the member that is missing. */
export function selectionShape(selection: Selection | undefined): { shape: string; bucket: string } {
  const shape = selection?.shape;
  if (!selection || shape === undefined || shape.case === undefined)
    throw invalid("selection is required: set exactly one of its shapes (object_single, objects_multi, ...)");
  const name = SHAPE_NAMES[shape.case]!;
  const bucket = shape.value.bucket.trim();
  if (bucket === "") throw invalid(`selection.${name}.bucket is required`);
  return { shape: name, bucket: shape.value.bucket };
}

/** Resolves the selection in the organization: NOT_FOUND for a missing bucket, object, collection or table. */
export async function resolveSelection(
  ports: ActionsPorts,
  orgId: string,
  selection: Selection | undefined,
): Promise<ResolvedSelection> {
  const { shape, bucket } = selectionShape(selection);
  if (!(await ports.objects.bucketExists(orgId, bucket))) throw notFound(`bucket ${bucket} not found`);
  const base = { shape, pillar: selection!.pillar, bucket, objects: [], collection: "", chunkIds: [] };
  const member = selection!.shape;
  switch (member.case) {
    case "objectSingle": {
      const { key, contentType } = member.value;
      if (key === "") throw invalid("selection.object_single.key is required");
      return { ...base, objects: [await selectedObject(ports, orgId, bucket, key, contentType, "object_single.key")] };
    }
    case "objectsMulti": {
      const { keys, contentTypes } = member.value;
      if (keys.length === 0) throw invalid("selection.objects_multi.keys is required");
      if (keys.length > MAX_SELECTED_OBJECTS)
        throw invalid(`selection.objects_multi.keys: at most ${MAX_SELECTED_OBJECTS} objects`);
      if (contentTypes.length !== 0 && contentTypes.length !== keys.length)
        throw invalid("selection.objects_multi.content_types must be empty or aligned with keys");
      const objects = await Promise.all(
        keys.map((key, i) =>
          selectedObject(ports, orgId, bucket, key, contentTypes[i] ?? "", `objects_multi.keys[${i}]`),
        ),
      );
      return { ...base, objects };
    }
    case "collectionSingle":
    case "chunksMulti": {
      const { collection } = member.value;
      const field = member.case === "collectionSingle" ? "collection_single" : "chunks_multi";
      if (collection === "") throw invalid(`selection.${field}.collection is required`);
      if (!(await ports.vectors.collectionExists(orgId, bucket, collection)))
        throw notFound(`collection ${collection} not found in bucket ${bucket}`);
      if (member.case === "collectionSingle") return { ...base, collection };
      const chunkIds = member.value.chunkIds;
      if (chunkIds.length === 0) throw invalid("selection.chunks_multi.chunk_ids is required");
      if (chunkIds.length > MAX_SELECTED_CHUNKS)
        throw invalid(`selection.chunks_multi.chunk_ids: at most ${MAX_SELECTED_CHUNKS} chunks`);
      return { ...base, collection, chunkIds };
    }
    case "tableSingle": {
      const { tableName } = member.value;
      if (tableName === "") throw invalid("selection.table_single.table_name is required");
      if (!ports.tables)
        throw new ConnectError("warehouse tables are not served by this server", Code.FailedPrecondition);
      const table = await ports.tables.getTable(orgId, bucket, tableName).catch((error: unknown) => {
        // A name no table can have is the selection's mistake.
        if (error instanceof ConnectError && error.code === Code.InvalidArgument)
          throw invalid(`selection.table_single.table_name: ${error.rawMessage}`);
        throw error;
      });
      if (!table) throw notFound(`table ${tableName} not found in bucket ${bucket}`);
      return { ...base, table };
    }
    default:
      return base;
  }
}

async function selectedObject(
  ports: ActionsPorts,
  orgId: string,
  bucket: string,
  key: string,
  given: string,
  field: string,
): Promise<SelectedObject> {
  if (key === "") throw invalid(`selection.${field} is required`);
  const head = await ports.objects.head(orgId, bucket, key);
  if (!head) throw notFound(`object ${key} not found in bucket ${bucket}`);
  if (given.trim() !== "") return { key, contentType: normalType(given), size: head.size };
  let contentType = ports.text.mediaTypeOf(key, head.contentType);
  // Neither a stored type nor a telling name: the first bytes say what it is (a PDF by any name).
  if (contentType === "application/octet-stream") {
    const start = await ports.objects.readStart(orgId, bucket, key, SNIFFED_BYTES);
    if (start) contentType = ports.text.mediaTypeOf(key, head.contentType, start);
  }
  return { key, contentType, size: head.size };
}

const normalType = (type: string) => type.split(";")[0]!.trim().toLowerCase();

/** The key's extension with its dot, lower case (`.pdf`), or "". */
export function extensionOf(key: string): string {
  const name = key.slice(key.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot <= 0 ? "" : name.slice(dot).toLowerCase();
}

/** Whether the action takes this object: no lists means any; else its type or its extension is listed. */
export function acceptsObject(action: ActionDefinition, object: SelectedObject): boolean {
  const types = action.acceptedContentTypes;
  const extensions = action.acceptedExtensions;
  if (types.length === 0 && extensions.length === 0) return true;
  if (types.some((type) => normalType(type) === object.contentType)) return true;
  const extension = extensionOf(object.key);
  return extension !== "" && extensions.some((accepted) => accepted.toLowerCase() === extension);
}

/** Why the action does not take the selection (the field it names), or undefined when it does. */
export function selectionMismatch(action: ActionDefinition, selection: ResolvedSelection): string | undefined {
  if (!action.pillars.includes(selection.pillar))
    return `selection.pillar: action ${action.id} does not run on the ${JSON.stringify(selection.pillar)} pillar (it takes ${action.pillars.map((p) => JSON.stringify(p)).join(", ")})`;
  if (!action.shapes.includes(selection.shape))
    return `selection.${selection.shape}: action ${action.id} does not take this selection shape (it takes ${action.shapes.join(", ")})`;
  const index = selection.objects.findIndex((object) => !acceptsObject(action, object));
  if (index !== -1) {
    const object = selection.objects[index]!;
    const field =
      selection.shape === "object_single"
        ? "selection.object_single.content_type"
        : `selection.objects_multi.content_types[${index}]`;
    return `${field}: action ${action.id} does not take ${object.contentType} (${object.key}); it takes ${[...action.acceptedContentTypes, ...action.acceptedExtensions].join(", ")}`;
  }
  return undefined;
}
