import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { resultRows, type Database } from "./database.js";

/**
 * Statements on a request's hot path are built once per database and run as prepared statements,
 * their values passed as `sql.placeholder(name)`. An unprepared drizzle query rebuilds its SQL on
 * every call, and postgres.js sends an unnamed statement that has parameters in two round trips
 * (it asks the server for the parameter types first). A prepared one is built once, described
 * once per connection, and then takes one round trip: a four-column lookup costs about 55 µs of
 * CPU instead of 320 µs on PostgreSQL (bench/RESULTS.md, "Prepared statements").
 *
 * `perDatabase` memoises a statement per database handle: a pool's own user database gets its
 * own. Statements are not built inside transactions; those keep the ordinary builders.
 */
export function perDatabase<T>(build: (db: Database) => T): (db: Database) => T {
  const built = new WeakMap<Database, T>();
  return (db) => {
    let statement = built.get(db);
    if (statement === undefined) {
      statement = build(db);
      built.set(db, statement);
    }
    return statement;
  };
}

export interface PreparedSql<Row> {
  execute(values: Record<string, unknown>): Promise<Row[]>;
}

const dialect = new PgDialect();

/**
 * Prepares a raw statement, for what the builders cannot say (a data-modifying CTE), the way a
 * builder's `.prepare(name)` does. Answers the rows as objects with the statement's column names.
 */
export function prepareSql<Row>(db: Database, name: string, query: SQL): PreparedSql<Row> {
  const prepared = db._.session.prepareQuery(dialect.sqlToQuery(query), undefined, name, false);
  return { execute: async (values) => resultRows<Row>(await prepared.execute(values)) };
}
