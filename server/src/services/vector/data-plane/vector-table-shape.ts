import { Code, ConnectError } from "@connectrpc/connect";
import type { SqlExecutor } from "../engine/sql-executor.js";

interface ColumnRow {
  readonly relkind: string;
  readonly name: string | null;
  readonly type: string | null;
  readonly typmod: number | null;
  readonly unique: boolean | null;
}

const SHAPE = "(id text PRIMARY KEY, embedding vector(n), metadata jsonb)";

/**
 * The dimension of a plain vector table in the current schema, read from the catalog; undefined
 * when no relation has that name. A relation of that name that is not such a table (a view, a
 * table a SQL client made with other columns, an embedding without a fixed dimension) is
 * FAILED_PRECONDITION: the API never writes into a table it does not understand. Other columns
 * are allowed, as long as they let the API's rows in.
 */
export async function vectorTableShape(executor: SqlExecutor, table: string): Promise<number | undefined> {
  const rows = await executor.query<ColumnRow>(
    `SELECT c.relkind::text AS relkind, a.attname::text AS name, t.typname::text AS type, a.atttypmod AS typmod,
       EXISTS (SELECT 1 FROM pg_index i
               WHERE i.indrelid = c.oid AND i.indisunique AND i.indnatts = 1 AND i.indkey[0] = a.attnum) AS unique
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       AND a.attname IN ('id', 'embedding', 'metadata')
     LEFT JOIN pg_type t ON t.oid = a.atttypid
     WHERE n.nspname = current_schema() AND c.relname = $1`,
    [table],
  );
  if (rows.length === 0) return undefined;
  const notVectorTable = (why: string) =>
    new ConnectError(`table ${table} exists and is not a vector table ${SHAPE}: ${why}`, Code.FailedPrecondition);
  if (!rows.every((row) => row.relkind === "r" || row.relkind === "p")) throw notVectorTable("it is not a table");
  const column = (name: string) => rows.find((row) => row.name === name);
  const id = column("id");
  if (!id || id.type !== "text" || !id.unique) throw notVectorTable("its id is not a unique text column");
  const embedding = column("embedding");
  const dimension = Number(embedding?.typmod ?? -1);
  if (!embedding || embedding.type !== "vector" || dimension <= 0)
    throw notVectorTable("its embedding is not a vector(n) column with a dimension");
  if (column("metadata")?.type !== "jsonb") throw notVectorTable("its metadata is not a jsonb column");
  return dimension;
}

/**
 * What a database error means for the caller when the table changed under the API (a SQL client
 * dropped it, added a constraint, a column without a default). Anything else stays as it is, and
 * the transport answers it as internal.
 */
export function sqlErrorOf(error: unknown, table: string): unknown {
  if (error instanceof ConnectError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return error;
  if (code === "42P01") return new ConnectError(`table ${table} does not exist`, Code.NotFound);
  if (code.startsWith("23"))
    return new ConnectError(`table ${table}'s own constraints refused the vectors`, Code.FailedPrecondition);
  if (code === "42P07") return new ConnectError(`a relation named ${table} already exists`, Code.FailedPrecondition);
  return error;
}
