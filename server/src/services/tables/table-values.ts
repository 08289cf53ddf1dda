import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { ColumnType, TableColumn } from "./table-columns.js";

/**
 * Values of warehouse tables: what a JSON value means for a column type (coercion, for writes),
 * which column type a set of values suggests (inference, for tables created from data), and how a
 * stored value reads back as JSON.
 *
 * Text that looks like a value of another type counts as that type (`"42"` is an integer,
 * `"true"` a boolean), because CSV cells are all text. An empty string is no value (NULL) for
 * every type but string: an empty CSV cell is a missing value. Integers are 64-bit in the table
 * but must be exact in JSON, so they are limited to +-(2^53 - 1).
 */

const INTEGER = /^[-+]?(0|[1-9][0-9]*)$/;
const NUMBER = /^[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/;
/** ISO-8601 date or date-time (`T` or a space between), fractional seconds, `Z` or an offset; none means UTC. */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** Why a value does not fit a column type (the caller names the row and column). */
export class ValueError extends Error {
  override name = "ValueError";
}

/** The value as SQL text for a `$n::<type>` parameter, or null for NULL; throws ValueError when it does not fit. */
export function sqlText(value: JsonValue | undefined, type: ColumnType): string | null {
  if (value === null || value === undefined) return null;
  if (value === "" && type !== "string") return null;
  switch (type) {
    case "string":
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return String(value);
      throw new ValueError("expected a string, got an object or array");
    case "integer": {
      const text = typeof value === "string" ? value.trim() : value;
      if (typeof text === "number" && Number.isSafeInteger(text)) return String(text);
      if (typeof text === "string" && INTEGER.test(text) && Number.isSafeInteger(Number(text)))
        return String(Number(text));
      throw new ValueError(`expected an integer between -(2^53 - 1) and 2^53 - 1, got ${shown(value)}`);
    }
    case "number": {
      const text = typeof value === "string" ? value.trim() : value;
      if (typeof text === "number") return String(text);
      if (typeof text === "string" && NUMBER.test(text) && Number.isFinite(Number(text))) return String(Number(text));
      throw new ValueError(`expected a number, got ${shown(value)}`);
    }
    case "boolean": {
      if (typeof value === "boolean") return String(value);
      const text = typeof value === "string" ? value.trim().toLowerCase() : "";
      if (text === "true" || text === "false") return text;
      throw new ValueError(`expected true or false, got ${shown(value)}`);
    }
    case "timestamp": {
      const timestamp = typeof value === "string" ? isoTimestamp(value.trim()) : undefined;
      if (timestamp === undefined) throw new ValueError(`expected an ISO-8601 timestamp, got ${shown(value)}`);
      return timestamp;
    }
    case "json":
      return JSON.stringify(value);
  }
}

/**
 * A timestamp in ISO-8601 form as PostgreSQL reads it unambiguously (`T`, an explicit zone: UTC
 * when none is given), or undefined when the text is not one or names a day the calendar lacks.
 */
export function isoTimestamp(text: string): string | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour = "00", minute = "00", second = "00", fraction = "", zone = "Z"] = match;
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  // Date.UTC rolls 2024-02-30 over into March: a day that comes back different does not exist.
  const date = new Date(Date.UTC(y, m - 1, d));
  if (y < 1 || date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  const offset =
    zone.toUpperCase() === "Z" ? "Z" : zone.replace(/^([+-]\d{2}):?(\d{2})?$/, (_, h, mm) => `${h}:${mm ?? "00"}`);
  if (offset !== "Z" && (Number(offset.slice(1, 3)) > 15 || Number(offset.slice(4, 6)) > 59)) return undefined;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 7)}${offset}`;
}

/** The type one value suggests; undefined for no value (null, missing, empty text). */
function typeOfValue(value: JsonValue | undefined): ColumnType | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isSafeInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "json";
  const text = value.trim();
  const lower = text.toLowerCase();
  if (lower === "true" || lower === "false") return "boolean";
  // Leading zeros ("007", a postcode) and huge digit strings stay text: as numbers they would change.
  if (INTEGER.test(text) && Number.isSafeInteger(Number(text))) return "integer";
  if (NUMBER.test(text) && Number.isFinite(Number(text)) && !/^[-+]?0[0-9]/.test(text)) return "number";
  if (isoTimestamp(text) !== undefined) return "timestamp";
  return "string";
}

/**
 * The columns rows suggest, in the order their keys first appear: one type that every value of a
 * column fits. Integers and numbers together are numbers; an object or array anywhere makes the
 * column json; other mixes are strings; a column with no value at all is a string.
 */
export function inferColumns(rows: readonly JsonObject[]): TableColumn[] {
  const seen = new Map<string, Set<ColumnType>>();
  for (const row of rows) {
    for (const [key, value] of Object.entries(row)) {
      let types = seen.get(key);
      if (!types) seen.set(key, (types = new Set()));
      const type = typeOfValue(value);
      if (type) types.add(type);
    }
  }
  return [...seen].map(([name, types]) => ({ name, type: unified(types) }));
}

function unified(types: Set<ColumnType>): ColumnType {
  if (types.size === 0) return "string";
  if (types.has("json")) return "json";
  if (types.size === 1) return [...types][0]!;
  if (types.size === 2 && types.has("integer") && types.has("number")) return "number";
  return "string";
}

/** A text cell as the JSON value of its column's type (CSV cells after inference); empty text is null. */
export function typedCell(text: string, type: ColumnType): JsonValue {
  if (text === "") return null;
  switch (type) {
    case "integer":
    case "number":
      return Number(text.trim());
    case "boolean":
      return text.trim().toLowerCase() === "true";
    case "timestamp":
      return isoTimestamp(text.trim()) ?? text;
    default:
      return text;
  }
}

/** A value read from the table (through the SELECT of table-store) as JSON. */
export function jsonOfStored(value: unknown, type: ColumnType): JsonValue {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "integer":
    case "number":
      return Number(value);
    case "boolean":
      return value === true || value === "t" || value === "true";
    case "json":
      return (typeof value === "string" ? JSON.parse(value) : value) as JsonValue;
    case "timestamp":
      // Read as `YYYY-MM-DDTHH:MI:SS.USZ` in UTC; trailing zero digits of the fraction go.
      return String(value)
        .replace(/(\.\d*?)0+Z$/, "$1Z")
        .replace(/\.Z$/, "Z");
    default:
      return String(value);
  }
}

function shown(value: JsonValue): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
