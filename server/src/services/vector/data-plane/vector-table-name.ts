import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Lower-case letters, digits and `_`, starting with a letter: a name a SQL client can write
 * unquoted (PostgreSQL folds unquoted names to lower case). 48 characters leave room in the
 * 63-byte identifier limit for the index names derived from it (`<table>__hnsw_cosine`).
 */
const TABLE_NAME = /^[a-z][a-z0-9_]{0,47}$/;

/**
 * Prefixes of tables the data plane must never touch: `vc_` for the pipeline catalog's
 * collections (`vc_<uuid hex>` and their `__terms`, `__df`, `__stats` side tables) and `pg_`,
 * which PostgreSQL reserves for its catalogs.
 */
const RESERVED_PREFIXES = ["vc_", "pg_"] as const;

/**
 * Checks a table name of the data-plane vector API and answers it quoted for SQL. `__` is
 * refused anywhere in the name because the engine names its side tables and indexes
 * `<name>__<suffix>`: no vector table can then shadow one of them.
 */
export function vectorTableName(table: string): string {
  if (table === "") throw invalid("table is required");
  if (!TABLE_NAME.test(table))
    throw invalid(`table ${JSON.stringify(table)} must be 1-48 characters of a-z, 0-9 and _, starting with a letter`);
  const prefix = RESERVED_PREFIXES.find((reserved) => table.startsWith(reserved));
  if (prefix)
    throw invalid(`table ${JSON.stringify(table)} is reserved: names starting with ${prefix} are not vector tables`);
  if (table.includes("__"))
    throw invalid(`table ${JSON.stringify(table)} is reserved: names holding __ are not vector tables`);
  return `"${table}"`;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
