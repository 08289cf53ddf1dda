import { create, toJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { ActionEventSchema, type ActionEvent } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import {
  ActionRunStatus,
  S3ObjectRefSchema,
  SiblingFileRefSchema,
  VectorChunksRefSchema,
  WarehouseRowsRefSchema,
  type ActionRunManifest,
} from "../../../../gen/platform/data/actions/v1/action_run_pb.js";
import type { JsonObject } from "../script/dsl/cel-json.js";

export function startedEvent(actionId: string, threadId: string, runId: string, startedAtMs: number): ActionEvent {
  return create(ActionEventSchema, {
    event: { case: "started", value: { actionId, threadId, runId, startedAtMs: BigInt(startedAtMs) } },
  });
}

export const isTerminal = (event: ActionEvent) => event.event.case === "completed" || event.event.case === "failed";

/** Whether the manifest records how the run ended. */
export const hasEnded = (manifest: ActionRunManifest) =>
  manifest.status !== ActionRunStatus.RUNNING && manifest.status !== ActionRunStatus.UNSPECIFIED;

/** The terminal event an ended run's manifest stands for. */
export function terminalEvent(manifest: ActionRunManifest): ActionEvent {
  if (manifest.status === ActionRunStatus.COMPLETED)
    return create(ActionEventSchema, {
      event: { case: "completed", value: { output: recordedOutput(manifest), durationMs: manifest.durationMs } },
    });
  const error =
    manifest.error !== ""
      ? manifest.error
      : manifest.status === ActionRunStatus.CANCELLED
        ? "the run was cancelled"
        : "the run failed";
  return create(ActionEventSchema, {
    event: {
      case: "failed",
      value: { error, failedStepPath: manifest.failedStepPath, failedStepName: manifest.failedStepName },
    },
  });
}

/**
 * The `completed` output a replay from the manifest can give: the inline output (an object as it
 * is, anything else as `{value}`), or where the output lives (`{siblingFile: {...}}`,
 * `{warehouseRows: {...}}`, `{s3Object: {...}}`, `{vectorChunks: {...}}`, proto JSON) for outputs
 * kept outside the manifest; empty for a run without output. The full output of a live run is
 * only in the events of RunAction and of a watch that saw the run end.
 */
export function recordedOutput(manifest: ActionRunManifest): JsonObject {
  const location = manifest.outputLocation;
  switch (location.case) {
    case "outputInline": {
      const value = toJson(ValueSchema, location.value) as JsonValue;
      return typeof value === "object" && value !== null && !Array.isArray(value)
        ? (value as JsonObject)
        : ({ value } as JsonObject);
    }
    case "siblingFile":
      return { siblingFile: toJson(SiblingFileRefSchema, location.value) as JsonObject };
    case "warehouseRows":
      return { warehouseRows: toJson(WarehouseRowsRefSchema, location.value) as JsonObject };
    case "s3Object":
      return { s3Object: toJson(S3ObjectRefSchema, location.value) as JsonObject };
    case "vectorChunks":
      return { vectorChunks: toJson(VectorChunksRefSchema, location.value) as JsonObject };
    default:
      return {};
  }
}
