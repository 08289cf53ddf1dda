import { describe, expect, it } from "vitest";
import { ToolError } from "./tool-error.js";
import { checkToolInput, hasType } from "./tool-input.js";
import type { JsonValue, ToolDefinition, ToolParamType } from "./tool.js";

const tool: ToolDefinition = {
  name: "demo.tool",
  version: "1",
  description: "",
  inputs: [
    { name: "text", type: "string", required: true, description: "" },
    { name: "size", type: "integer", required: false, defaultValue: 10, description: "" },
    { name: "list", type: "array", required: false, defaultValue: ["a"], description: "" },
    { name: "anything", type: "", required: false, description: "" },
  ],
  outputs: [],
  runtime: { entrypoint: "demo", language: "native", image: "", timeoutMs: 0, memoryMiB: 0, gpu: "" },
  createdAtMs: 0,
};

function message(input: unknown): string {
  try {
    checkToolInput(tool, input);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).reason).toBe("invalid_input");
    return (error as ToolError).message;
  }
  throw new Error("expected invalid_input");
}

describe("checkToolInput", () => {
  it("applies defaults to omitted optional inputs and leaves given ones", () => {
    expect(checkToolInput(tool, { text: "x" })).toEqual({ text: "x", size: 10, list: ["a"] });
    expect(checkToolInput(tool, { text: "x", size: 3, anything: null })).toEqual({
      text: "x",
      size: 3,
      list: ["a"],
      anything: null,
    });
  });

  it("copies defaults, so a tool changing its input cannot change the declaration", () => {
    const first = checkToolInput(tool, { text: "x" });
    (first.list as string[]).push("b");
    expect(checkToolInput(tool, { text: "x" }).list).toEqual(["a"]);
  });

  it("names the missing, mistyped or unknown input", () => {
    expect(message({})).toBe('demo.tool: input "text" is required');
    expect(message({ text: 1 })).toBe('demo.tool: input "text" must be a string, got number 1');
    expect(message({ text: "x", size: 1.5 })).toBe('demo.tool: input "size" must be an integer, got number 1.5');
    expect(message({ text: "x", size: "3" })).toBe('demo.tool: input "size" must be an integer, got the string "3"');
    expect(message({ text: "x", list: {} })).toBe('demo.tool: input "list" must be an array, got an object');
    expect(message({ text: "x", chunk_size: 3 })).toBe(
      'demo.tool: "chunk_size" is not an input of this tool (inputs: text, size, list, anything)',
    );
  });

  it("refuses an input that is not an object", () => {
    expect(message([])).toBe("demo.tool: the input must be a JSON object, got an array");
    expect(message(null)).toBe("demo.tool: the input must be a JSON object, got null");
    expect(message("x")).toBe('demo.tool: the input must be a JSON object, got the string "x"');
  });

  it("does not treat inherited names as given", () => {
    expect(message(JSON.parse('{"text": "x", "__proto__": {"size": 1}}'))).toMatch(/"__proto__" is not an input/);
  });
});

describe("hasType", () => {
  it.each([
    [1, "number", true],
    [Number.NaN, "number", false],
    [2 ** 53, "integer", false],
    [3, "integer", true],
    [null, "object", false],
    [[], "object", false],
    [{}, "object", true],
    [[], "array", true],
    [false, "boolean", true],
    [null, "", true],
  ] as [JsonValue, ToolParamType, boolean][])("%j is %s: %s", (value, type, expected) => {
    expect(hasType(value, type)).toBe(expected);
  });
});
