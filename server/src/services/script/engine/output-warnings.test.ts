import { describe, expect, it } from "vitest";
import { parseScript } from "../dsl/parse-script.js";
import { MAX_OUTPUT_WARNINGS, outputWarnings } from "./output-warnings.js";

const document = parseScript(`dsl: script/1
outputs:
  type: object
  properties:
    items: {type: array, items: {type: integer}}
    label: {type: string}
steps: [{id: noop, set: {values: {a: 1}}}]
`);

describe("output warnings", () => {
  it("lists each mismatch with the outputs schema, and nothing for a matching output", () => {
    expect(outputWarnings(document, { items: [1, 2], label: "ok" })).toEqual([]);
    expect(outputWarnings(document, { items: [1, "two"], label: 3 })).toEqual([
      "output/items/1: must be integer",
      "output/label: must be string",
    ]);
    expect(outputWarnings(document, "text")).toEqual(["output: must be object"]);
  });

  it("keeps at most MAX_OUTPUT_WARNINGS lines, the last one counting the rest", () => {
    const warnings = outputWarnings(document, { items: Array.from({ length: 50 }, (_, i) => `item ${i}`) });
    expect(warnings).toHaveLength(MAX_OUTPUT_WARNINGS);
    expect(warnings[0]).toBe("output/items/0: must be integer");
    expect(warnings.at(-1)).toBe(`… and ${50 - MAX_OUTPUT_WARNINGS + 1} more mismatches with the outputs schema`);
  });
});
