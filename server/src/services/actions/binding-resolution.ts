import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import { ACTION_BINDINGS, type ActionBinding } from "./action-bindings.js";
import type { ActionDefinition } from "./action-definition.js";
import type { ActionsPorts } from "./actions-ports.js";
import { invalid, notFound, type ResolvedSelection, type SelectedObject } from "./selection-adaptation.js";

/**
 * The values the service binds into a template's inputs (the script never reads storage itself).
 * Caps, so that one run cannot hand a thread an unbounded input:
 * - an object is read up to MAX_OBJECT_BYTES;
 * - `object.text` and `objects.items[].text` share MAX_TEXT_CHARS characters of extracted text
 *   (the rest is cut off);
 * - `object.rows` and `table.rows` carry at most MAX_ROWS rows (`table.row_count` is the true count);
 * - `similar.hits` searches with the first MAX_QUERY_CHARS characters of the object's text.
 */
export const MAX_OBJECT_BYTES = 32 * 1024 * 1024;
export const MAX_TEXT_CHARS = 2 * 1024 * 1024;
export const MAX_ROWS = 10_000;
export const MAX_QUERY_CHARS = 8_000;
export const DEFAULT_TOP_K = 10;
export const MAX_TOP_K = 100;

/**
 * The checks of the bindings that cost no read of the selected data: each binding fits the
 * selection's shape, the tables it needs are served, and `similar.hits` has its collection and
 * `top_k`. resolveBindings makes them first; a queued dispatch makes only them when enqueued.
 */
export async function checkBindings(
  ports: ActionsPorts,
  orgId: string,
  action: ActionDefinition,
  selection: ResolvedSelection,
  params: JsonObject,
): Promise<void> {
  for (const binding of Object.values(action.bind)) {
    if (!(binding in ACTION_BINDINGS))
      throw new ConnectError(`action ${action.id} binds an unknown value ${binding}`, Code.FailedPrecondition);
    const shapes: readonly string[] = ACTION_BINDINGS[binding as ActionBinding];
    if (!shapes.includes(selection.shape))
      throw invalid(`selection.${selection.shape}: action ${action.id} needs a ${shapes.join(" or ")} selection`);
    if (binding === "object.rows" || binding === "table.rows") tablesOf(ports);
    if (binding === "similar.hits") {
      const collection = params["collection"];
      if (typeof collection !== "string" || collection === "") throw invalid("params.collection is required");
      topKOf(params["top_k"]);
      if (!(await ports.vectors.collectionExists(orgId, selection.bucket, collection)))
        throw notFound(`collection ${collection} not found in bucket ${selection.bucket}`);
    }
  }
}

/** Fills every input the action binds; the text of the object is extracted once for all bindings that need it. */
export async function resolveBindings(
  ports: ActionsPorts,
  orgId: string,
  action: ActionDefinition,
  selection: ResolvedSelection,
  params: JsonObject,
): Promise<JsonObject> {
  await checkBindings(ports, orgId, action, selection, params);
  let text: Promise<string> | undefined;
  const textOf = () => (text ??= objectText(ports, orgId, selection.bucket, selection.objects[0]!, MAX_TEXT_CHARS));
  const values: JsonObject = {};
  for (const [input, binding] of Object.entries(action.bind))
    values[input] = await bindingValue(ports, orgId, selection, binding, params, textOf);
  return values;
}

async function bindingValue(
  ports: ActionsPorts,
  orgId: string,
  selection: ResolvedSelection,
  binding: string,
  params: JsonObject,
  textOf: () => Promise<string>,
): Promise<JsonValue> {
  const { bucket } = selection;
  const object = selection.objects[0];
  switch (binding) {
    case "bucket":
    case "object.bucket":
      return bucket;
    case "object.key":
      return object!.key;
    case "object.content_type":
      return object!.contentType;
    case "object.text":
      return textOf();
    case "object.rows":
      return objectRows(ports, orgId, bucket, object!);
    case "objects.keys":
      return selection.objects.map((selected) => selected.key);
    case "objects.items": {
      const items: JsonObject[] = [];
      let budget = MAX_TEXT_CHARS;
      for (const selected of selection.objects) {
        const itemText = budget > 0 ? await objectText(ports, orgId, bucket, selected, budget) : "";
        budget -= itemText.length;
        items.push({ key: selected.key, content_type: selected.contentType, text: itemText });
      }
      return items;
    }
    case "collection.name":
      return selection.collection;
    case "chunks.items":
      return (await ports.vectors.readChunks(orgId, bucket, selection.collection, selection.chunkIds)).map((chunk) => ({
        id: chunk.id,
        content: chunk.content,
        metadata: chunk.metadata,
      }));
    case "table.name":
      return selection.table!.name;
    case "table.columns":
      return selection.table!.columns.map((column) => ({ name: column.name, type: column.type }));
    case "table.row_count":
      return selection.table!.rowCount;
    case "table.rows":
      return tablesOf(ports).readRows(orgId, bucket, selection.table!.name, { limit: MAX_ROWS, offset: 0 });
    case "similar.hits": {
      const collection = params["collection"] as string;
      const topK = topKOf(params["top_k"]);
      const query = (await textOf()).slice(0, MAX_QUERY_CHARS);
      if (query.trim() === "") return [];
      const hits = await ports.vectors.search(orgId, bucket, collection, query, topK);
      return hits.map((hit) => ({ key: hit.key, score: hit.score, content: hit.content }));
    }
  }
  throw new ConnectError(`unknown binding ${binding}`, Code.FailedPrecondition);
}

function topKOf(value: JsonValue | undefined): number {
  if (value === undefined || value === null) return DEFAULT_TOP_K;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TOP_K)
    throw invalid(`params.top_k must be an integer from 1 to ${MAX_TOP_K}`);
  return value;
}

async function readObject(ports: ActionsPorts, orgId: string, bucket: string, object: SelectedObject) {
  const read = await ports.objects.read(orgId, bucket, object.key, MAX_OBJECT_BYTES);
  if (!read) throw notFound(`object ${object.key} not found in bucket ${bucket}`);
  return read.bytes;
}

async function objectText(
  ports: ActionsPorts,
  orgId: string,
  bucket: string,
  object: SelectedObject,
  maxChars: number,
): Promise<string> {
  const bytes = await readObject(ports, orgId, bucket, object);
  try {
    const text = await ports.text.extract(object.key, object.contentType, bytes);
    return text.length > maxChars ? text.slice(0, maxChars) : text;
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    // The extractor's message names the object and its type, never the server's internals.
    const why = error instanceof Error ? error.message : String(error);
    throw invalid(`selection: the text of ${object.key} cannot be extracted: ${why}`);
  }
}

async function objectRows(
  ports: ActionsPorts,
  orgId: string,
  bucket: string,
  object: SelectedObject,
): Promise<JsonObject[]> {
  const tables = tablesOf(ports);
  const text = Buffer.from(await readObject(ports, orgId, bucket, object)).toString("utf8");
  const jsonLines =
    /json/.test(object.contentType) ||
    /\.(jsonl|ndjson)$/i.test(object.key) ||
    object.contentType === "application/x-ndjson";
  try {
    const rows = jsonLines ? tables.parseJsonLines(text) : tables.parseCsv(text);
    return rows.length > MAX_ROWS ? rows.slice(0, MAX_ROWS) : rows;
  } catch (error) {
    if (error instanceof ConnectError)
      throw new ConnectError(`selection: ${object.key}: ${error.rawMessage}`, error.code);
    throw invalid(`selection: ${object.key} cannot be read as ${jsonLines ? "JSON Lines" : "CSV"}`);
  }
}

function tablesOf(ports: ActionsPorts) {
  if (!ports.tables) throw new ConnectError("warehouse tables are not served by this server", Code.FailedPrecondition);
  return ports.tables;
}
