import { fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { SelectionSchema, type Selection } from "../../../../gen/platform/data/actions/v1/selection_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";
import type { ActionDispatch } from "./action-runner.js";
import type { NewQueueEntry, QueueRow } from "./action-queue-store.js";

/** A prepared dispatch as the queue stores it: the selection as proto JSON, so that a restart reads it back whole. */
export function queueEntryOf(dispatch: ActionDispatch): NewQueueEntry {
  return {
    runId: dispatch.runId,
    orgId: dispatch.orgId,
    bucket: dispatch.bucket,
    actionId: dispatch.actionId,
    batchId: dispatch.batchId,
    reverseTs: dispatch.reverseTs,
    selection: toJson(SelectionSchema, dispatch.selection),
    params: dispatch.params,
    selectionLabel: selectionLabel(dispatch.selection),
    enqueuedAt: dispatch.enqueuedAtMs,
  };
}

/** The dispatch a queued row stands for. */
export function dispatchOf(row: QueueRow): ActionDispatch {
  return {
    runId: row.runId,
    reverseTs: row.reverseTs,
    orgId: row.orgId,
    bucket: row.bucket,
    actionId: row.actionId,
    selection: fromJson(SelectionSchema, row.selection as JsonValue, { ignoreUnknownFields: true }),
    params: row.params as JsonObject,
    batchId: row.batchId,
    enqueuedAtMs: row.enqueuedAt,
  };
}

/**
 * What ListActiveRuns shows of a selection: the object key, `<n> objects` (the first key too),
 * `collection:<name>`, `<n> chunks of <collection>`, `table:<name>`, or `bucket:<name>` for none.
 */
export function selectionLabel(selection: Selection): string {
  const shape = selection.shape;
  switch (shape.case) {
    case "objectSingle":
      return shape.value.key;
    case "objectsMulti": {
      const keys = shape.value.keys;
      return keys.length === 1 ? keys[0]! : `${keys.length} objects (${keys[0] ?? ""}, ...)`;
    }
    case "collectionSingle":
      return `collection:${shape.value.collection}`;
    case "chunksMulti":
      return `${shape.value.chunkIds.length} chunks of collection:${shape.value.collection}`;
    case "tableSingle":
      return `table:${shape.value.tableName}`;
    case "none":
      return `bucket:${shape.value.bucket}`;
    default:
      return "";
  }
}
