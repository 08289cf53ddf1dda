import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject, JsonValue } from "../script/dsl/cel-json.js";
import type { SqlExecutor } from "../vector/engine/sql-executor.js";
import { catalogEntries, catalogEntry, deleteEntry, insertEntry, type CatalogEntry } from "./table-catalog.js";
import {
  checkColumns,
  checkTableName,
  COLUMN_TYPES,
  quoted,
  ROW_ORDER_COLUMN,
  type ColumnType,
  type TableColumn,
} from "./table-columns.js";
import { DEFAULT_READ_ROWS, INSERT_BATCH_ROWS, MAX_READ_ROWS, MAX_WRITE_ROWS } from "./table-limits.js";
import { inferColumns, jsonOfStored, sqlText, ValueError } from "./table-values.js";

export interface TableStoreOptions {
  /** Bucket existence in the caller's organization; an unknown bucket is NOT_FOUND. */
  readonly buckets: { exists(orgId: string, bucket: string): Promise<boolean> };
  /**
   * The executor on the bucket's engine database (VectorService's engineDatabase). With
   * `provision` true a bucket without an engine gets its implicit auto engine first; with false
   * such a bucket answers undefined (it has no tables), so reading never provisions a database.
   */
  engineDatabase(orgId: string, bucket: string, provision: boolean): Promise<SqlExecutor | undefined>;
}

export type WriteMode = "append" | "merge";

export interface LoadOptions {
  readonly mode?: WriteMode;
  readonly create?: "never" | "if_missing" | "replace";
  /** The columns of a table the load creates; inferred from the rows when absent. */
  readonly columns?: readonly { readonly name: string; readonly type: string }[];
  /** The merge keys of a table the load creates. */
  readonly mergeKeys?: readonly string[];
}

/** A table as the catalog describes it. */
export interface TableSummary {
  readonly name: string;
  readonly columns: TableColumn[];
  readonly mergeKeys: string[];
  /** ISO-8601, UTC. */
  readonly createdAt: string;
}

export interface TableInfo extends TableSummary {
  readonly rowCount: number;
}

export interface TableRows {
  readonly columns: TableColumn[];
  /** The page of rows, in insertion order (a merged row keeps its place). */
  readonly rows: JsonObject[];
  /** All the rows of the table, not only this page. */
  readonly rowCount: number;
}

export interface ColumnDescription extends TableColumn {
  /** Share of the rows whose value is null, 0 to 1 (0 for an empty table). */
  readonly nullRatio: number;
}

export interface TableDescription {
  readonly name: string;
  readonly columns: ColumnDescription[];
  readonly mergeKeys: string[];
  readonly rowCount: number;
}

/**
 * The warehouse tables of buckets: typed columns, optional merge keys, rows written whole or not
 * at all. Tables live in the bucket's engine database (see table-catalog.ts), so a bucket's
 * tables are reached only through that bucket, and another organization's bucket is NOT_FOUND
 * before any database is opened.
 *
 * Errors: bad input is INVALID_ARGUMENT naming the field (`name`, `columns[1].type`,
 * `rows[4].price`); a missing bucket or table NOT_FOUND; a name taken ALREADY_EXISTS; a merge on
 * a table without merge keys FAILED_PRECONDITION.
 */
export class TableStore {
  readonly #options: TableStoreOptions;

  constructor(options: TableStoreOptions) {
    this.#options = options;
  }

  /** Creates an empty table; `replace` drops a table of that name first, in the same transaction. */
  async createTable(
    orgId: string,
    bucket: string,
    name: string,
    columns: readonly { readonly name: string; readonly type: string }[],
    mergeKeys: readonly string[] = [],
    options: { readonly replace?: boolean } = {},
  ): Promise<TableInfo> {
    checkTableName(name);
    const checked = checkColumns(columns, mergeKeys);
    const executor = await this.#database(orgId, bucket, true);
    const entry = await guarded(name, () =>
      executor!.transaction(async (tx) => {
        if (options.replace) {
          const existing = await catalogEntry(tx, name, "update");
          if (existing) await deleteEntry(tx, existing);
        }
        const created = await insertEntry(tx, name, checked, mergeKeys);
        if (!created) throw new ConnectError(`table ${name} already exists in bucket ${bucket}`, Code.AlreadyExists);
        return created;
      }),
    );
    return { ...summaryOf(entry), rowCount: 0 };
  }

  /** The table, or undefined when the bucket (which must exist) has no table of that name. */
  async findTable(orgId: string, bucket: string, name: string): Promise<TableInfo | undefined> {
    checkTableName(name);
    const executor = await this.#database(orgId, bucket, false);
    if (!executor) return undefined;
    return guarded(name, () =>
      executor.transaction(async (tx) => {
        const entry = await catalogEntry(tx, name);
        return entry && { ...summaryOf(entry), rowCount: await rowCount(tx, entry) };
      }),
    );
  }

  async getTable(orgId: string, bucket: string, name: string): Promise<TableInfo> {
    const table = await this.findTable(orgId, bucket, name);
    if (!table) throw notFound(name, bucket);
    return table;
  }

  /** The bucket's tables by name (no row counts: those cost a scan each). */
  async listTables(orgId: string, bucket: string): Promise<TableSummary[]> {
    const executor = await this.#database(orgId, bucket, false);
    return executor ? (await catalogEntries(executor)).map(summaryOf) : [];
  }

  async dropTable(orgId: string, bucket: string, name: string): Promise<void> {
    checkTableName(name);
    const executor = await this.#database(orgId, bucket, false);
    if (!executor) throw notFound(name, bucket);
    await guarded(name, () =>
      executor.transaction(async (tx) => {
        const entry = await catalogEntry(tx, name, "update");
        if (!entry) throw notFound(name, bucket);
        await deleteEntry(tx, entry);
      }),
    );
  }

  /**
   * Writes rows in one transaction: all of them or, on any error, none. Every value is checked
   * against its column's type first (a bad one is INVALID_ARGUMENT `rows[i].column`); keys that
   * are not columns are refused, missing ones are null. `merge` upserts on the merge keys (the
   * last of several rows with the same keys wins); `append` inserts, and on a table with merge
   * keys a row whose keys are already there is ALREADY_EXISTS. Answers the rows written (for a
   * merge, after rows with the same keys are folded into one).
   */
  async writeRows(
    orgId: string,
    bucket: string,
    name: string,
    rows: readonly JsonObject[],
    mode: WriteMode = "append",
  ): Promise<number> {
    return (await this.loadTable(orgId, bucket, name, rows, { mode })).written;
  }

  /**
   * writeRows, creating the table first when asked, in the same transaction: a load that fails
   * leaves no table it created, and no table it was to replace gone. `create`: `never` (the
   * default: a missing table is NOT_FOUND), `if_missing` (a missing table is created with
   * `columns`, or else the columns inferred from the rows, and `mergeKeys`), `replace` (a table
   * of that name is dropped first, then created so). An existing table keeps its own columns.
   */
  async loadTable(
    orgId: string,
    bucket: string,
    name: string,
    rows: readonly JsonObject[],
    options: LoadOptions = {},
  ): Promise<{ written: number; created: boolean }> {
    checkTableName(name);
    const { mode = "append", create = "never", mergeKeys = [] } = options;
    if (mode !== "append" && mode !== "merge")
      throw new ConnectError(`mode ${JSON.stringify(mode)} must be append or merge`, Code.InvalidArgument);
    if (create !== "never" && create !== "if_missing" && create !== "replace")
      throw new ConnectError(
        `create ${JSON.stringify(create)} must be never, if_missing or replace`,
        Code.InvalidArgument,
      );
    if (rows.length > MAX_WRITE_ROWS)
      throw new ConnectError(
        `rows has ${rows.length} rows; one write takes at most ${MAX_WRITE_ROWS}`,
        Code.InvalidArgument,
      );
    rows.forEach((row, index) => {
      if (row === null || typeof row !== "object" || Array.isArray(row))
        throw new ConnectError(`rows[${index}] must be a JSON object`, Code.InvalidArgument);
    });
    // Given columns are checked before any database work; inferred ones only when a table is made.
    if (create !== "never" && options.columns) checkColumns(options.columns, mergeKeys);
    const executor = await this.#database(orgId, bucket, create !== "never");
    if (!executor) throw notFound(name, bucket);
    return guarded(name, () =>
      executor.transaction(async (tx) => {
        let entry: CatalogEntry | undefined;
        if (create === "replace") {
          const existing = await catalogEntry(tx, name, "update");
          if (existing) await deleteEntry(tx, existing);
        } else {
          entry = await catalogEntry(tx, name, "share");
        }
        let created = false;
        if (!entry) {
          if (create === "never") throw notFound(name, bucket);
          // A concurrent creation of the name may win; the rows then go into its table.
          const columns = columnsToCreate(rows, options.columns, mergeKeys);
          entry = (await insertEntry(tx, name, columns, mergeKeys)) ?? (await catalogEntry(tx, name, "share"));
          if (!entry) throw new ConnectError(`table ${name} is being created; retry`, Code.Unavailable);
          created = true;
        }
        if (mode === "merge" && entry.mergeKeys.length === 0)
          throw new ConnectError(
            `table ${name} has no merge keys: write it in append mode, or create it with merge keys`,
            Code.FailedPrecondition,
          );
        let cells = rows.map((row, index) => rowCells(row, index, entry));
        if (mode === "merge") cells = lastPerKey(cells, entry);
        for (let start = 0; start < cells.length; start += INSERT_BATCH_ROWS)
          await insertBatch(tx, entry, cells.slice(start, start + INSERT_BATCH_ROWS), mode);
        return { written: cells.length, created };
      }),
    );
  }

  /** A page of rows in insertion order; `limit` defaults to 100, at most 10,000. */
  async readRows(
    orgId: string,
    bucket: string,
    name: string,
    page: { readonly limit?: number; readonly offset?: number } = {},
  ): Promise<TableRows> {
    checkTableName(name);
    const limit = page.limit ?? DEFAULT_READ_ROWS;
    const offset = page.offset ?? 0;
    if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_READ_ROWS)
      throw new ConnectError(`limit must be between 0 and ${MAX_READ_ROWS}, got ${limit}`, Code.InvalidArgument);
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new ConnectError(`offset must be a non-negative integer, got ${offset}`, Code.InvalidArgument);
    const executor = await this.#database(orgId, bucket, false);
    if (!executor) throw notFound(name, bucket);
    return guarded(name, () =>
      executor.transaction(async (tx) => {
        const entry = await catalogEntry(tx, name);
        if (!entry) throw notFound(name, bucket);
        const selected = entry.columns.map((column, i) => `${readExpression(column)} AS c${i}`);
        const stored = await tx.query<Record<string, unknown>>(
          `SELECT ${selected.join(", ")} FROM ${quoted(entry.physical)} ORDER BY ${quoted(ROW_ORDER_COLUMN)} LIMIT $1 OFFSET $2`,
          [limit, offset],
        );
        const rows = stored.map((row) =>
          Object.fromEntries(entry.columns.map((column, i) => [column.name, jsonOfStored(row[`c${i}`], column.type)])),
        );
        return { columns: entry.columns, rows, rowCount: await rowCount(tx, entry) };
      }),
    );
  }

  /** Columns with their types and null ratios, and the row count, from one scan of the table. */
  async describe(orgId: string, bucket: string, name: string): Promise<TableDescription> {
    checkTableName(name);
    const executor = await this.#database(orgId, bucket, false);
    if (!executor) throw notFound(name, bucket);
    return guarded(name, () =>
      executor.transaction(async (tx) => {
        const entry = await catalogEntry(tx, name);
        if (!entry) throw notFound(name, bucket);
        const ratios = entry.columns.map(
          (column, i) =>
            `CASE WHEN count(*) = 0 THEN 0 ELSE (count(*) - count(${quoted(column.name)}))::float8 / count(*) END AS c${i}`,
        );
        const [row] = await tx.query<Record<string, unknown>>(
          `SELECT count(*)::text AS n, ${ratios.join(", ")} FROM ${quoted(entry.physical)}`,
        );
        return {
          name,
          columns: entry.columns.map((column, i) => ({ ...column, nullRatio: Number(row?.[`c${i}`] ?? 0) })),
          mergeKeys: entry.mergeKeys,
          rowCount: Number(row?.n ?? 0),
        };
      }),
    );
  }

  async #database(orgId: string, bucket: string, provision: boolean): Promise<SqlExecutor | undefined> {
    if (bucket === "") throw new ConnectError("bucket is required", Code.InvalidArgument);
    if (!(await this.#options.buckets.exists(orgId, bucket)))
      throw new ConnectError(`bucket ${bucket} not found`, Code.NotFound);
    return this.#options.engineDatabase(orgId, bucket, provision);
  }
}

/** The checked columns of a table a load creates: given, or inferred from its rows. */
function columnsToCreate(
  rows: readonly JsonObject[],
  given: LoadOptions["columns"],
  mergeKeys: readonly string[],
): TableColumn[] {
  if (given) return checkColumns(given, mergeKeys);
  if (rows.length === 0)
    throw new ConnectError("rows is empty: a table created from its rows needs at least one", Code.InvalidArgument);
  try {
    return checkColumns(inferColumns(rows), mergeKeys);
  } catch (error) {
    // The names come from the rows' keys: say so, rather than name a columns field nobody gave.
    if (error instanceof ConnectError && error.code === Code.InvalidArgument)
      throw new ConnectError(`the columns inferred from rows: ${error.rawMessage}`, Code.InvalidArgument);
    throw error;
  }
}

/** A row's values as SQL text, one per column in the table's order. */
function rowCells(row: JsonObject, index: number, entry: CatalogEntry): (string | null)[] {
  for (const key of Object.keys(row)) {
    if (!entry.columns.some((column) => column.name === key))
      throw new ConnectError(`rows[${index}].${key} is not a column of table ${entry.name}`, Code.InvalidArgument);
  }
  return entry.columns.map((column) => {
    let text: string | null;
    try {
      text = sqlText(row[column.name] as JsonValue | undefined, column.type);
    } catch (error) {
      if (!(error instanceof ValueError)) throw error;
      throw new ConnectError(
        `rows[${index}].${column.name}: ${error.message} (column type ${column.type})`,
        Code.InvalidArgument,
      );
    }
    if (text === null && entry.mergeKeys.includes(column.name))
      throw new ConnectError(
        `rows[${index}].${column.name} is required: it is a merge key of table ${entry.name}`,
        Code.InvalidArgument,
      );
    return text;
  });
}

/** One row per merge key value, the last given: one statement may not update a row twice. */
function lastPerKey(cells: (string | null)[][], entry: CatalogEntry): (string | null)[][] {
  const keyIndexes = entry.mergeKeys.map((key) => entry.columns.findIndex((column) => column.name === key));
  const byKey = new Map<string, (string | null)[]>();
  for (const row of cells) {
    const key = JSON.stringify(keyIndexes.map((i) => row[i]));
    byKey.delete(key);
    byKey.set(key, row);
  }
  return [...byKey.values()];
}

/**
 * One INSERT for a batch of rows: one text[] parameter per column, unnested in the rows' order
 * and cast to the column types in SQL, so the statement text depends only on the table.
 */
async function insertBatch(
  tx: SqlExecutor,
  entry: CatalogEntry,
  cells: (string | null)[][],
  mode: WriteMode,
): Promise<void> {
  const { columns, mergeKeys } = entry;
  const names = columns.map((column) => quoted(column.name)).join(", ");
  const aliases = columns.map((_, i) => `c${i}`).join(", ");
  const values = columns.map((column, i) => `u.c${i}::${COLUMN_TYPES[column.type]}`).join(", ");
  const arrays = columns.map((_, i) => `$${i + 1}::text[]`).join(", ");
  let conflict = "";
  if (mode === "merge") {
    const others = columns.filter((column) => !mergeKeys.includes(column.name));
    conflict =
      others.length === 0
        ? ` ON CONFLICT (${mergeKeys.map(quoted).join(", ")}) DO NOTHING`
        : ` ON CONFLICT (${mergeKeys.map(quoted).join(", ")}) DO UPDATE SET ${others
            .map((column) => `${quoted(column.name)} = excluded.${quoted(column.name)}`)
            .join(", ")}`;
  }
  await tx.query(
    `INSERT INTO ${quoted(entry.physical)} (${names})
     SELECT ${values} FROM unnest(${arrays}) WITH ORDINALITY AS u(${aliases}, ord) ORDER BY u.ord${conflict}`,
    // Arrays may hold nulls (SQL NULL elements); SqlParam's array types do not say so.
    columns.map((_, i) => cells.map((row) => row[i]!) as string[]),
  );
}

/** How a column is selected so that its value reads the same from either driver. */
function readExpression(column: TableColumn): string {
  const name = quoted(column.name);
  switch (column.type as ColumnType) {
    case "timestamp":
      return `to_char(${name} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case "integer":
    case "json":
      return `${name}::text`;
    default:
      return name;
  }
}

async function rowCount(tx: SqlExecutor, entry: CatalogEntry): Promise<number> {
  const [row] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${quoted(entry.physical)}`);
  return Number(row?.n ?? 0);
}

function summaryOf(entry: CatalogEntry): TableSummary {
  return { name: entry.name, columns: entry.columns, mergeKeys: entry.mergeKeys, createdAt: entry.createdAt };
}

function notFound(name: string, bucket: string): ConnectError {
  return new ConnectError(`table ${name} not found in bucket ${bucket}`, Code.NotFound);
}

/**
 * Database errors a caller can provoke, as API errors: rows repeating merge keys already in the
 * table, and a table's storage changed under the API by a SQL client. Anything else stays as it
 * is (the transport answers it as internal, without its detail).
 */
async function guarded<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConnectError) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "23505")
      throw new ConnectError(
        `rows repeat merge key values already in table ${name} (or among themselves); write them in merge mode to update those rows`,
        Code.AlreadyExists,
      );
    if (code === "42P01" || code === "42703" || code === "42804" || (typeof code === "string" && code.startsWith("23")))
      throw new ConnectError(
        `table ${name}'s storage was changed outside the table API; drop and create it again`,
        Code.FailedPrecondition,
      );
    throw error;
  }
}
