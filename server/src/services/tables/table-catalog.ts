import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "../vector/engine/sql-executor.js";
import { COLUMN_TYPES, quoted, ROW_ORDER_COLUMN, type TableColumn } from "./table-columns.js";

/**
 * The catalog of a bucket's warehouse tables: one row per table in `wt__catalog`, in the current
 * schema of the bucket's engine database (the bucket's own database or embedded schema, so the
 * tables of one bucket never meet another's). A table's rows live in `wt__<32 hex digits>`: a
 * generated name, so a table can be named anything the rules allow without meeting the vector
 * tables and collections that share the database (their names never hold `__` at that place:
 * data-plane vector tables refuse `__`, collections are `vc_...`).
 */
export const CATALOG = "wt__catalog";

const PHYSICAL = /^wt__[0-9a-f]{32}$/;

export interface CatalogEntry {
  readonly name: string;
  readonly physical: string;
  readonly columns: TableColumn[];
  readonly mergeKeys: string[];
  readonly createdAt: string;
}

interface CatalogRow {
  name: string;
  physical: string;
  columns: string;
  merge_keys: string;
  created_at: string;
}

const SELECT = `SELECT name, physical, columns::text AS columns, merge_keys::text AS merge_keys,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at FROM ${CATALOG}`;

export async function catalogExists(executor: SqlExecutor): Promise<boolean> {
  const [row] = await executor.query<{ present: boolean }>(
    `SELECT to_regclass(quote_ident(current_schema()) || '.${CATALOG}') IS NOT NULL AS present`,
  );
  return row?.present === true;
}

/** Creates the catalog when it is missing; two first creations in parallel are ordered by a lock. */
export async function ensureCatalog(tx: SqlExecutor): Promise<void> {
  if (await catalogExists(tx)) return;
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.${CATALOG}'))`);
  await tx.query(
    `CREATE TABLE IF NOT EXISTS ${CATALOG} (
      name text PRIMARY KEY,
      physical text NOT NULL UNIQUE,
      columns jsonb NOT NULL,
      merge_keys jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
  );
}

/**
 * One table's entry; `lock` takes its row lock for the rest of the transaction: `share` for
 * writes (many may write at once), `update` for a drop (which waits for them, and they for it).
 */
export async function catalogEntry(
  executor: SqlExecutor,
  name: string,
  lock?: "share" | "update",
): Promise<CatalogEntry | undefined> {
  if (!(await catalogExists(executor))) return undefined;
  const suffix = lock === "share" ? " FOR SHARE" : lock === "update" ? " FOR UPDATE" : "";
  const [row] = await executor.query<CatalogRow>(`${SELECT} WHERE name = $1${suffix}`, [name]);
  return row && entryOf(row);
}

export async function catalogEntries(executor: SqlExecutor): Promise<CatalogEntry[]> {
  if (!(await catalogExists(executor))) return [];
  return (await executor.query<CatalogRow>(`${SELECT} ORDER BY name`)).map(entryOf);
}

/**
 * Adds a table: its catalog row, then its rows' table (merge key columns NOT NULL and unique
 * together). Undefined when the name is taken; a concurrent creation of the same name waits on the
 * catalog's primary key and then finds it taken.
 */
export async function insertEntry(
  tx: SqlExecutor,
  name: string,
  columns: readonly TableColumn[],
  mergeKeys: readonly string[],
): Promise<CatalogEntry | undefined> {
  await ensureCatalog(tx);
  const physical = `wt__${randomUUID().replaceAll("-", "")}`;
  // Typed text first: postgres-js would encode a string bound straight to jsonb as a JSON string.
  const [row] = await tx.query<CatalogRow>(
    `INSERT INTO ${CATALOG} (name, physical, columns, merge_keys) VALUES ($1, $2, $3::text::jsonb, $4::text::jsonb)
     ON CONFLICT (name) DO NOTHING
     RETURNING name, physical, columns::text AS columns, merge_keys::text AS merge_keys,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`,
    [name, physical, JSON.stringify(columns), JSON.stringify(mergeKeys)],
  );
  if (!row) return undefined;
  const keys = new Set(mergeKeys);
  const definitions = columns.map(
    (column) => `${quoted(column.name)} ${COLUMN_TYPES[column.type]}${keys.has(column.name) ? " NOT NULL" : ""}`,
  );
  await tx.query(
    `CREATE TABLE ${quoted(physical)} (${quoted(ROW_ORDER_COLUMN)} bigserial PRIMARY KEY, ${definitions.join(", ")})`,
  );
  if (mergeKeys.length > 0)
    await tx.query(
      `CREATE UNIQUE INDEX ${quoted(`${physical}__merge`)} ON ${quoted(physical)} (${mergeKeys.map(quoted).join(", ")})`,
    );
  return entryOf(row);
}

export async function deleteEntry(tx: SqlExecutor, entry: CatalogEntry): Promise<void> {
  await tx.query(`DROP TABLE IF EXISTS ${quoted(entry.physical)}`);
  await tx.query(`DELETE FROM ${CATALOG} WHERE name = $1`, [entry.name]);
}

function entryOf(row: CatalogRow): CatalogEntry {
  // The name reaches SQL quoted: a catalog row a SQL client edited must not smuggle anything in.
  if (!PHYSICAL.test(row.physical)) throw new Error(`the catalog entry of table ${row.name} is damaged`);
  return {
    name: row.name,
    physical: row.physical,
    columns: JSON.parse(row.columns) as TableColumn[],
    mergeKeys: JSON.parse(row.merge_keys) as string[],
    createdAt: row.created_at,
  };
}
