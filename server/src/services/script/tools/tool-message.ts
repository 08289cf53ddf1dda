import { create, fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { ToolParamSchema, ToolRuntimeSchema, ToolSchema } from "../../../../../gen/platform/script/v1/catalog_pb.js";
import type {
  Tool as ToolMessage,
  ToolParam as ToolParamMessage,
} from "../../../../../gen/platform/script/v1/catalog_pb.js";
import { formatDuration } from "../dsl/duration.js";
import type { ToolDefinition, ToolParam } from "./tool.js";

/**
 * A tool as ListTools returns it (catalog.proto Tool). The runtime timeout becomes the contract's
 * duration string (`30s`, `5m`, `1h`; empty when 0, the platform default) and memory stays in MiB.
 */
export function toToolMessage(tool: ToolDefinition): ToolMessage {
  return create(ToolSchema, {
    toolId: tool.toolId ?? `${tool.name}@${tool.version}`,
    name: tool.name,
    version: tool.version,
    description: tool.description,
    inputs: tool.inputs.map(toParamMessage),
    outputs: tool.outputs.map(toParamMessage),
    runtime: create(ToolRuntimeSchema, {
      entrypoint: tool.runtime.entrypoint,
      language: tool.runtime.language,
      image: tool.runtime.image,
      timeout: tool.runtime.timeoutMs > 0 ? formatDuration(tool.runtime.timeoutMs) : "",
      memory: tool.runtime.memoryMiB,
      gpu: tool.runtime.gpu,
    }),
    createdAtMs: BigInt(tool.createdAtMs),
  });
}

function toParamMessage(param: ToolParam): ToolParamMessage {
  return create(ToolParamSchema, {
    name: param.name,
    type: param.type,
    required: param.required,
    defaultValue: param.defaultValue === undefined ? undefined : fromJson(ValueSchema, param.defaultValue),
    description: param.description,
  });
}
