import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ScriptContractSchema } from "../../../../../gen/platform/script/v1/catalog_pb.js";
import type { JsonValue } from "./cel-json.js";
import { compileContract, parseInputJson } from "./contract.js";
import { parseScript } from "./parse-script.js";

const document = parseScript(
  [
    "dsl: script/1",
    "inputs:",
    "  type: object",
    "  required: [ticket_id]",
    "  additionalProperties: false",
    "  properties:",
    "    ticket_id: {type: string}",
    "    priority: {enum: [P1, P2, P3], default: P3}",
    "    tags: {type: array, items: {type: string}, maxItems: 3}",
    "    limits: {type: object, properties: {count: {type: integer, minimum: 1}}}",
    "outputs:",
    "  type: object",
    "  required: [summary]",
    "  properties:",
    "    summary: {type: string}",
    "steps:",
    "  - {id: a, yield: {value: 1}}",
  ].join("\n"),
);

function invalidArgument(input: JsonValue): string {
  try {
    compileContract(document).validateInput(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    return (error as ConnectError).rawMessage;
  }
  throw new Error("the input was accepted");
}

describe("validateInput", () => {
  it("accepts a valid input and fills in defaults, without touching the caller's value", () => {
    const input = { ticket_id: "T-1" };
    expect(compileContract(document).validateInput(input)).toEqual({ ticket_id: "T-1", priority: "P3" });
    expect(input).toEqual({ ticket_id: "T-1" });
  });

  it.each<[JsonValue, string]>([
    [{ ticket_id: 42 }, "input_json/ticket_id: must be string"],
    [{}, "input_json/ticket_id: is required"],
    [{ ticket_id: "T", extra: 1 }, "input_json/extra: is not allowed (no such property)"],
    [{ ticket_id: "T", priority: "P9" }, 'input_json/priority: must be one of "P1", "P2", "P3"'],
    [{ ticket_id: "T", tags: ["a", 2] }, "input_json/tags/1: must be string"],
    [{ ticket_id: "T", tags: ["a", "b", "c", "d"] }, "input_json/tags: must NOT have more than 3 items"],
    [{ ticket_id: "T", limits: { count: 0 } }, "input_json/limits/count: must be >= 1"],
    [[], "input_json: must be object"],
    [
      { ticket_id: 1, priority: 2 },
      'input_json/ticket_id: must be string; input_json/priority: must be one of "P1", "P2", "P3"',
    ],
  ])("refuses %j naming the field", (input, message) => {
    expect(invalidArgument(input)).toBe(message);
  });

  it("names the request field it is given", () => {
    expect(() => compileContract(document).validateInput({}, "step_input_override_json")).toThrow(
      "step_input_override_json/ticket_id: is required",
    );
  });

  it("lists at most ten errors", () => {
    const wide = parseScript(
      [
        "dsl: script/1",
        "inputs:",
        "  type: object",
        `  properties: {${Array.from({ length: 12 }, (_, i) => `p${i}: {type: string}`).join(", ")}}`,
        "steps: [{id: a, yield: {value: 1}}]",
      ].join("\n"),
    );
    const input = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`p${i}`, i]));
    expect(() => compileContract(wide).validateInput(input)).toThrow(/p9: must be string; and 2 more$/);
  });
});

describe("validateOutput", () => {
  it("returns the problems of a final output without throwing", () => {
    const contract = compileContract(document);
    expect(contract.validateOutput({ summary: "done" })).toEqual([]);
    expect(contract.validateOutput({ summary: 3 })).toEqual(["output/summary: must be string"]);
    expect(contract.validateOutput({})).toEqual(["output/summary: is required"]);
  });
});

describe("toProto", () => {
  it("gives the ScriptContract fields as Struct JSON", () => {
    const fields = compileContract(document).toProto();
    const message = create(ScriptContractSchema, fields);
    expect(message.inputs).toEqual(document.inputs);
    expect(message.outputs).toEqual({
      type: "object",
      required: ["summary"],
      properties: { summary: { type: "string" } },
    });
    fields.inputs.type = "changed";
    expect(document.inputs.type).toBe("object");
  });

  it("compiles once per document", () => {
    expect(compileContract(document)).toBe(compileContract(document));
  });

  it("defaults to schemas that accept any object", () => {
    const open = parseScript("dsl: script/1\nsteps: [{id: a, yield: {value: 1}}]\n");
    expect(compileContract(open).toProto()).toEqual({ inputs: { type: "object" }, outputs: { type: "object" } });
    expect(compileContract(open).validateInput({ anything: [1] })).toEqual({ anything: [1] });
    expect(() => compileContract(open).validateInput("text")).toThrow("input_json: must be object");
  });
});

describe("parseInputJson", () => {
  it("reads JSON, and an empty string as {}", () => {
    expect(parseInputJson('{"a": 1}')).toEqual({ a: 1 });
    expect(parseInputJson("  ")).toEqual({});
  });

  it("refuses text that is not JSON, naming the field", () => {
    expect(() => parseInputJson("{a: 1}")).toThrow(/^\[invalid_argument\] input_json: is not valid JSON \(/);
  });
});
