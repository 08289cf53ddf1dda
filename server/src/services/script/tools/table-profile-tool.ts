import { columnNames, keysOf, objectRows } from "./csv-format-tool.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import { describe, isJsonObject } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool } from "./tool.js";

/** Column types, as the warehouse tables name them. */
export type ColumnType = "string" | "integer" | "number" | "boolean" | "timestamp" | "json";

const MAX_EXAMPLES = 3;
const INTEGER = /^-?(?:0|[1-9]\d{0,15})$/;
const NUMBER = /^-?(?:0|[1-9]\d{0,30})(?:\.\d{1,30})?(?:[eE][+-]?\d{1,3})?$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `table.profile`: for each column of some rows, its type (given, or inferred from the values),
 * how many rows have no value, and the distinct values. What a table action needs and CEL has no
 * cheap way to compute: one pass over the rows.
 */
export function createTableProfileTool(): Tool {
  return {
    name: "table.profile",
    version: NATIVE_TOOL_VERSION,
    description:
      "Profiles rows (JSON objects) column by column: the type (the one given, or inferred: integer, number, boolean, " +
      "timestamp for ISO 8601 text, json for objects and arrays, else string; numbers and booleans written as text count " +
      "as such), null count and ratio (a missing key, null and the empty string count as null), distinct values and a few examples.",
    inputs: [
      { name: "rows", type: "array", required: true, description: "the rows, objects" },
      {
        name: "columns",
        type: "array",
        required: false,
        description:
          "the columns, names or {name, type}; default: every key of the rows, in order of appearance, types inferred",
      },
    ],
    outputs: [
      { name: "row_count", type: "integer", required: true, description: "rows profiled" },
      {
        name: "columns",
        type: "array",
        required: true,
        description: "{name, type, inferred_type, null_count, null_ratio, distinct_count, examples} per column",
      },
    ],
    runtime: nativeRuntime("tableProfile", 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input) {
      const rows = objectRows(input.rows as JsonValue[], "table.profile");
      const given = input.columns === undefined ? undefined : (input.columns as JsonValue[]);
      const names = given === undefined ? keysOf(rows) : columnNames(given, "table.profile");
      const columns = names.map((name, index) => {
        const declared = given === undefined ? undefined : declaredType(given[index], index);
        return profileColumn(name, declared, rows);
      });
      return { row_count: rows.length, columns };
    },
  };
}

function declaredType(column: JsonValue | undefined, index: number): string | undefined {
  if (!isJsonObject(column) || column.type === undefined) return undefined;
  if (typeof column.type !== "string")
    throw invalidInput(`table.profile: columns[${index}].type must be a string, got ${describe(column.type)}`);
  return column.type;
}

function profileColumn(name: string, declared: string | undefined, rows: readonly JsonObject[]): JsonObject {
  let nulls = 0;
  let inferred: ColumnType | undefined;
  const distinct = new Set<string>();
  const examples: JsonValue[] = [];
  for (const row of rows) {
    const value = Object.hasOwn(row, name) ? row[name] : undefined;
    if (value === undefined || value === null || value === "") {
      nulls++;
      continue;
    }
    inferred = widen(inferred, typeOf(value));
    const key = JSON.stringify(value);
    if (!distinct.has(key)) {
      distinct.add(key);
      if (examples.length < MAX_EXAMPLES) examples.push(value);
    }
  }
  const inferredType = inferred ?? "string";
  return {
    name,
    type: declared ?? inferredType,
    inferred_type: inferredType,
    null_count: nulls,
    null_ratio: rows.length === 0 ? 0 : nulls / rows.length,
    distinct_count: distinct.size,
    examples,
  };
}

/** The narrowest type of one value; text that reads as a number, boolean or time counts as one. */
export function typeOf(value: JsonValue): ColumnType {
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isSafeInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "json";
  const text = value as string;
  // Digits only: an integer, unless a leading zero or the size says it is an identifier (a zip
  // code, an account number) that a number column would change.
  if (/^-?\d+$/.test(text)) return INTEGER.test(text) && Number.isSafeInteger(Number(text)) ? "integer" : "string";
  if (NUMBER.test(text) && Number.isFinite(Number(text))) return "number";
  if (text === "true" || text === "false" || text === "TRUE" || text === "FALSE") return "boolean";
  if (TIMESTAMP.test(text) && !Number.isNaN(Date.parse(text.replace(" ", "T")))) return "timestamp";
  return "string";
}

/** The type that holds values of both: integers widen to numbers, anything else mixed is text (or JSON). */
function widen(current: ColumnType | undefined, next: ColumnType): ColumnType {
  if (current === undefined || current === next) return next;
  const pair = new Set([current, next]);
  if (pair.has("integer") && pair.has("number")) return "number";
  if (pair.has("json")) return "json";
  return "string";
}
