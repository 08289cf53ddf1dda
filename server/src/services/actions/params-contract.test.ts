import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { ActionTemplate } from "./actions-ports.js";
import { checkParams, paramsForm } from "./params-contract.js";

const template: ActionTemplate = {
  id: "action_sample",
  description: "A sample.",
  inputs: {
    type: "object",
    additionalProperties: false,
    required: ["text", "table_name"],
    properties: {
      text: { type: "string", maxLength: 10 },
      table_name: { type: "string", description: "Where the rows go." },
      mode: { type: "string", enum: ["fast", "careful"], default: "fast", description: "How." },
      limit: { type: ["integer", "null"], minimum: 1 },
    },
  },
  outputs: { type: "object", properties: { rows: { type: "array", description: "The rows." } } },
};

describe("an action's params contract", () => {
  it("is the template's contract less the bound inputs, with enums named after their input", () => {
    const form = paramsForm(template, new Set(["text"]));
    expect(form.inputs.map((input) => [input.name, input.type, input.required])).toEqual([
      ["table_name", "string", true],
      ["mode", "mode_values", false],
      ["limit", "integer", false],
    ]);
    expect(toJson(ValueSchema, form.inputs[1]!.defaultValue!)).toBe("fast");
    expect(form.enums).toMatchObject([{ name: "mode_values", values: ["fast", "careful"], description: "How." }]);
    expect(form.outputs).toMatchObject([{ name: "rows", type: "array", description: "The rows." }]);
  });

  it("checks params with the bound values in place, naming the field", () => {
    expect(() => checkParams(template, { table_name: "t" }, { text: "short" })).not.toThrow();
    const problem = (params: Record<string, unknown>, bound = { text: "short" }) => {
      try {
        checkParams(template, params as never, bound);
      } catch (error) {
        expect(error).toBeInstanceOf(ConnectError);
        expect((error as ConnectError).code).toBe(Code.InvalidArgument);
        return (error as ConnectError).rawMessage;
      }
      return "";
    };
    expect(problem({})).toBe("params.table_name: is required");
    expect(problem({ table_name: "t", limit: 0 })).toContain("params.limit");
    expect(problem({ table_name: "t", mode: "slow" })).toBe('params.mode: must be one of "fast", "careful"');
    // A bound value the selection's data makes invalid names the selection, not a param.
    expect(problem({ table_name: "t" }, { text: "much too long for it" })).toContain("selection (bound text)");
  });
});
