import { describe, expect, it } from "vitest";
import { createNativeToolSource } from "./native-tools.js";
import { testContext, toolError } from "./test-kit.js";
import { createToolRegistry } from "./tool-registry.js";
import type { JsonObject } from "./tool.js";

const registry = createToolRegistry([createNativeToolSource()]);
const profile = (input: JsonObject) => registry.invoke("org", "table.profile", input, testContext());

describe("table.profile", () => {
  it("infers the type of each column from JSON values and from CSV text, and counts nulls", async () => {
    const rows: JsonObject[] = [
      { id: "1", price: "9.50", paid: "true", at: "2024-05-01T10:30:00Z", day: "2024-05-01", tags: ["a"], note: "x" },
      { id: "2", price: "12", paid: "false", at: "2024-05-02 08:00:00", day: "", tags: { b: 1 }, note: "17" },
      { id: 3, price: 4, paid: true, at: null, tags: null, note: "" },
      { id: "0042", price: "-1e3", paid: "", at: "2024-05-03T00:00:00.5+02:00", day: "2024-13-45", note: "y" },
    ];
    const { row_count, columns } = (await profile({ rows })) as { row_count: number; columns: JsonObject[] };
    expect(row_count).toBe(4);
    // "0042" keeps its zeros only as text: an id column with a leading zero is a string column.
    expect(columns.map((column) => [column.name, column.type])).toEqual([
      ["id", "string"],
      ["price", "number"],
      ["paid", "boolean"],
      ["at", "timestamp"],
      ["day", "string"],
      ["tags", "json"],
      ["note", "string"],
    ]);
    expect(columns.find((column) => column.name === "day")).toMatchObject({
      null_count: 2,
      null_ratio: 0.5,
      distinct_count: 2,
      examples: ["2024-05-01", "2024-13-45"],
    });
    expect(columns.find((column) => column.name === "at")).toMatchObject({ null_count: 1, null_ratio: 0.25 });
  });

  it("keeps digits with a leading zero or past 2^53 as text", async () => {
    const rows: JsonObject[] = [{ zip: "01234", account: "12345678901234567890", count: "9007199254740991" }];
    const { columns } = (await profile({ rows })) as { columns: JsonObject[] };
    expect(columns.map((column) => [column.name, column.type])).toEqual([
      ["zip", "string"],
      ["account", "string"],
      ["count", "integer"],
    ]);
  });

  it("keeps the types of the columns given, reporting the inferred one beside it", async () => {
    const rows: JsonObject[] = [{ qty: "3" }, { qty: "4" }, {}];
    expect(await profile({ rows, columns: [{ name: "qty", type: "string" }, "missing"] })).toEqual({
      row_count: 3,
      columns: [
        {
          name: "qty",
          type: "string",
          inferred_type: "integer",
          null_count: 1,
          null_ratio: 1 / 3,
          distinct_count: 2,
          examples: ["3", "4"],
        },
        {
          name: "missing",
          type: "string",
          inferred_type: "string",
          null_count: 3,
          null_ratio: 1,
          distinct_count: 0,
          examples: [],
        },
      ],
    });
  });

  it("profiles no rows with ratios of 0", async () => {
    expect(await profile({ rows: [], columns: ["a"] })).toMatchObject({ row_count: 0, columns: [{ null_ratio: 0 }] });
  });

  it.each([
    [{ rows: ["a"] }, "rows[0] must be an object"],
    [{ rows: [], columns: [{ name: "a", type: 3 }] }, "columns[0].type must be a string, got number 3"],
    [{ rows: [], columns: [""] }, "columns[0] must be a name or an object with a name"],
  ])("refuses %j", async (input, message) => {
    expect((await toolError(profile(input), "invalid_input")).message).toContain(`table.profile: ${message}`);
  });
});
