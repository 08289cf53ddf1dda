import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const format = (input: JsonObject) => registry.invoke("org", "csv.format", input, testContext());

describe("csv.format", () => {
  it("writes RFC 4180 CSV, quoting only the fields that need it", async () => {
    const rows: JsonObject[] = [
      { id: 1, name: "Widget, large", note: 'says "hi"', ok: true },
      { id: 2, name: "Line\nbreak", note: null, tags: ["a", "b"] },
      { id: 3.5, name: "Carriage\rreturn", note: "" },
    ];
    expect(await format({ rows })).toEqual({
      text:
        "id,name,note,ok,tags\r\n" +
        '1,"Widget, large","says ""hi""",true,\r\n' +
        '2,"Line\nbreak",,,"[""a"",""b""]"\r\n' +
        '3.5,"Carriage\rreturn",,,\r\n',
      rows: 3,
      columns: ["id", "name", "note", "ok", "tags"],
    });
  });

  it("follows the columns given, as names or table columns, with another delimiter and no header", async () => {
    const rows: JsonObject[] = [{ a: "x;y", b: 1, c: "unused" }];
    expect(
      await format({ rows, columns: [{ name: "b", type: "integer" }, "a"], delimiter: ";", header: false }),
    ).toEqual({ text: '1;"x;y"\r\n', rows: 1, columns: ["b", "a"] });
  });

  it("writes only the header for no rows", async () => {
    expect(await format({ rows: [], columns: ["a", "b"] })).toMatchObject({ text: "a,b\r\n", rows: 0 });
  });

  it.each([
    [{ rows: [{ a: 1 }, 2] }, "rows[1] must be an object, got number 2"],
    [{ rows: [], columns: ["a", { type: "string" }] }, "columns[1] must be a name or an object with a name"],
    [{ rows: [], delimiter: "::" }, 'delimiter must be one of ",", ";", "\\t", "|"'],
  ])("refuses %j", async (input, message) => {
    expect((await toolError(format(input), "invalid_input")).message).toContain(message);
  });
});
