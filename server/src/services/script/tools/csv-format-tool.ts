import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput } from "./tool-error.js";
import { describe, isJsonObject } from "./tool-input.js";
import type { JsonObject, JsonValue, Tool } from "./tool.js";

/** Rows one call writes; a table action reads at most 10,000. */
export const MAX_CSV_ROWS = 100_000;
/** Characters of the CSV text: it becomes a step output, held in the thread's memory. */
export const MAX_CSV_CHARS = 32 * 1024 * 1024;
const DELIMITERS = [",", ";", "\t", "|"];

/**
 * `csv.format`: rows of JSON objects as RFC 4180 CSV: CRLF line ends, and a field holding the
 * delimiter, a double quote, CR or LF enclosed in double quotes with its quotes doubled.
 */
export function createCsvFormatTool(): Tool {
  return {
    name: "csv.format",
    version: NATIVE_TOOL_VERSION,
    description:
      "Writes rows (JSON objects) as RFC 4180 CSV: one line per row, CRLF line ends, quoted fields where needed. " +
      "Missing and null values are empty fields; objects and arrays are written as JSON.",
    inputs: [
      { name: "rows", type: "array", required: true, description: `the rows, objects, at most ${MAX_CSV_ROWS}` },
      {
        name: "columns",
        type: "array",
        required: false,
        description:
          "the columns in order: names, or objects with a name (table columns); default: every key of the rows, in order of appearance",
      },
      {
        name: "header",
        type: "boolean",
        required: false,
        defaultValue: true,
        description: "write a header line of the column names",
      },
      {
        name: "delimiter",
        type: "string",
        required: false,
        defaultValue: ",",
        description: 'the field separator: ",", ";", "\\t" or "|"',
      },
    ],
    outputs: [
      { name: "text", type: "string", required: true, description: "the CSV text" },
      { name: "rows", type: "integer", required: true, description: "data lines written (the header not counted)" },
      { name: "columns", type: "array", required: true, description: "the column names, in order" },
    ],
    runtime: nativeRuntime("csvFormat", 60_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    async invoke(input) {
      const rows = objectRows(input.rows as JsonValue[], "csv.format");
      const delimiter = input.delimiter as string;
      if (!DELIMITERS.includes(delimiter))
        throw invalidInput(`csv.format: delimiter must be one of ",", ";", "\\t", "|", got ${describe(delimiter)}`);
      const columns = input.columns === undefined ? keysOf(rows) : columnNames(input.columns as JsonValue[]);
      const lines: string[] = [];
      let size = 0;
      const add = (line: string) => {
        size += line.length + 2;
        if (size > MAX_CSV_CHARS)
          throw invalidInput(`csv.format: the CSV text would be over ${MAX_CSV_CHARS} characters`);
        lines.push(line);
      };
      if (input.header === true) add(columns.map((name) => field(name, delimiter)).join(delimiter));
      for (const row of rows) add(columns.map((name) => field(cellText(row[name]), delimiter)).join(delimiter));
      return { text: lines.map((line) => `${line}\r\n`).join(""), rows: rows.length, columns };
    },
  };
}

/** The rows of a table tool's input: objects, with the failing index named. */
export function objectRows(values: readonly JsonValue[], tool: string, max = MAX_CSV_ROWS): JsonObject[] {
  if (values.length > max) throw invalidInput(`${tool}: rows must hold at most ${max} rows, got ${values.length}`);
  return values.map((value, index) => {
    if (!isJsonObject(value)) throw invalidInput(`${tool}: rows[${index}] must be an object, got ${describe(value)}`);
    return value;
  });
}

/** Every key of the rows, in order of first appearance. */
export function keysOf(rows: readonly JsonObject[]): string[] {
  const keys = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) keys.add(key);
  return [...keys];
}

/** Column names from names or `{name, …}` objects (as a table's columns binding gives them). */
export function columnNames(values: readonly JsonValue[], tool = "csv.format"): string[] {
  return values.map((value, index) => {
    if (typeof value === "string" && value !== "") return value;
    if (isJsonObject(value) && typeof value.name === "string" && value.name !== "") return value.name;
    throw invalidInput(`${tool}: columns[${index}] must be a name or an object with a name, got ${describe(value)}`);
  });
}

function cellText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function field(text: string, delimiter: string): string {
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
