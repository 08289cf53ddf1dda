import { Code, ConnectError } from "@connectrpc/connect";
import { MAX_COLUMNS } from "./table-limits.js";

/** The column types of a warehouse table, and the PostgreSQL type each is stored as. */
export const COLUMN_TYPES = {
  string: "text",
  integer: "bigint",
  number: "double precision",
  boolean: "boolean",
  timestamp: "timestamptz",
  json: "jsonb",
} as const;

export type ColumnType = keyof typeof COLUMN_TYPES;

export interface TableColumn {
  readonly name: string;
  readonly type: ColumnType;
}

/**
 * Table and column names: lower-case letters, digits and `_`, not starting with a digit, at most
 * 63 characters (PostgreSQL's identifier length), so that a column is also a name a SQL client
 * can write unquoted.
 */
const NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The hidden column that orders a table's rows (insertion order); user columns may not start with `__`. */
export const ROW_ORDER_COLUMN = "__row";

export function checkTableName(name: string, field = "name"): string {
  if (name === "") throw invalid(`${field} is required`);
  if (!NAME.test(name))
    throw invalid(
      `${field} ${JSON.stringify(name)} must be 1-63 characters of a-z, 0-9 and _, not starting with a digit`,
    );
  return name;
}

export function isColumnType(type: string): type is ColumnType {
  return Object.hasOwn(COLUMN_TYPES, type);
}

/**
 * Checks a table's columns and merge keys as a create request gives them: valid distinct names,
 * known types, merge keys naming distinct columns. Errors name the field (`columns[2].type`,
 * `merge_keys[0]`).
 */
export function checkColumns(
  columns: readonly { readonly name: string; readonly type: string }[],
  mergeKeys: readonly string[],
): TableColumn[] {
  if (columns.length === 0) throw invalid("columns must name at least one column");
  if (columns.length > MAX_COLUMNS) throw invalid(`columns has ${columns.length} columns; the limit is ${MAX_COLUMNS}`);
  const seen = new Set<string>();
  const checked = columns.map((column, index) => {
    const field = `columns[${index}]`;
    checkTableName(column.name, `${field}.name`);
    if (column.name.startsWith("__"))
      throw invalid(`${field}.name ${JSON.stringify(column.name)} is reserved: column names may not start with __`);
    if (seen.has(column.name)) throw invalid(`${field}.name ${JSON.stringify(column.name)} is given twice`);
    seen.add(column.name);
    if (!isColumnType(column.type))
      throw invalid(
        `${field}.type ${JSON.stringify(column.type)} must be one of ${Object.keys(COLUMN_TYPES).join(", ")}`,
      );
    return { name: column.name, type: column.type };
  });
  const keys = new Set<string>();
  mergeKeys.forEach((key, index) => {
    if (!seen.has(key)) throw invalid(`merge_keys[${index}] ${JSON.stringify(key)} is not a column of the table`);
    if (keys.has(key)) throw invalid(`merge_keys[${index}] ${JSON.stringify(key)} is given twice`);
    keys.add(key);
  });
  return checked;
}

/** A checked name, quoted for SQL. */
export function quoted(name: string): string {
  return `"${name}"`;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
