import { describe, expect, it } from "vitest";
import { compileSchema } from "./json-schema.js";

describe("compileSchema", () => {
  it("compiles a schema once per content and defaults setting", () => {
    const schema = { type: "object", properties: { n: { type: "integer", default: 3 } } };
    const first = compileSchema(schema);
    expect(compileSchema(structuredClone(schema))).toBe(first);
    const withDefaults = compileSchema(schema, { useDefaults: true });
    expect(withDefaults).not.toBe(first);
    const value: Record<string, unknown> = {};
    expect(withDefaults.validate?.(value)).toBe(true);
    expect(value).toEqual({ n: 3 });
  });

  it("still refuses what the meta-schema refuses, per dialect", () => {
    expect(compileSchema({ type: "integer", minimum: "one" }).problems).toMatchObject([{ pointer: "/minimum" }]);
    expect(
      compileSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "string", maxLength: -1 }).problems,
    ).toMatchObject([{ pointer: "/maxLength" }]);
    expect(compileSchema({ type: "string", requird: true }).problems).toMatchObject([
      { message: 'unknown keyword "requird"' },
    ]);
  });
});
