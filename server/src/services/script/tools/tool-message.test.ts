import { toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ToolSchema } from "../../../../../gen/platform/script/v1/catalog_pb.js";
import { toToolMessage } from "./tool-message.js";
import type { ToolDefinition } from "./tool.js";

const definition: ToolDefinition = {
  name: "text.split",
  version: "1",
  description: "splits text",
  inputs: [
    { name: "text", type: "string", required: true, description: "the text" },
    { name: "separators", type: "array", required: false, defaultValue: ["\n\n", " "], description: "cut points" },
  ],
  outputs: [{ name: "chunks", type: "array", required: true, description: "the chunks" }],
  runtime: { entrypoint: "textSplit", language: "native", image: "", timeoutMs: 30_000, memoryMiB: 256, gpu: "" },
  createdAtMs: 1_764_028_800_000,
};

describe("toToolMessage", () => {
  it("builds the contract's Tool, as ListTools renders it in JSON", () => {
    expect(toJson(ToolSchema, toToolMessage(definition))).toEqual({
      toolId: "text.split@1",
      name: "text.split",
      version: "1",
      description: "splits text",
      inputs: [
        { name: "text", type: "string", required: true, description: "the text" },
        { name: "separators", type: "array", defaultValue: ["\n\n", " "], description: "cut points" },
      ],
      outputs: [{ name: "chunks", type: "array", required: true, description: "the chunks" }],
      runtime: { entrypoint: "textSplit", language: "native", timeout: "30s", memory: 256 },
      createdAtMs: "1764028800000",
    });
  });

  it("writes the timeout in its canonical form, and nothing for the platform default", () => {
    const withTimeout = (timeoutMs: number) =>
      toToolMessage({ ...definition, runtime: { ...definition.runtime, timeoutMs } }).runtime?.timeout;
    expect(withTimeout(5 * 60_000)).toBe("5m");
    expect(withTimeout(3_600_000)).toBe("1h");
    expect(withTimeout(330_000)).toBe("5m30s");
    expect(withTimeout(0)).toBe("");
  });

  it("keeps a given tool id and the GPU class", () => {
    const message = toToolMessage({
      ...definition,
      toolId: "app_123",
      runtime: { ...definition.runtime, gpu: "H100:2", image: "registry/x:1" },
    });
    expect(message.toolId).toBe("app_123");
    expect(message.runtime?.gpu).toBe("H100:2");
    expect(message.runtime?.image).toBe("registry/x:1");
    expect(message.createdAtMs).toBe(1_764_028_800_000n);
  });

  it("distinguishes a null default from no default", () => {
    const message = toToolMessage({
      ...definition,
      inputs: [
        { name: "x", type: "", required: false, defaultValue: null, description: "" },
        { name: "y", type: "", required: false, description: "" },
      ],
    });
    expect(message.inputs[0]?.defaultValue?.kind.case).toBe("nullValue");
    expect(message.inputs[1]?.defaultValue).toBeUndefined();
  });
});
