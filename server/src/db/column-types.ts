import { sql } from "drizzle-orm";
import { bigint, customType } from "drizzle-orm/pg-core";

/** Column types for the schema files, so every table stores bytes and times alike. */

export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  // postgres-js gives a Buffer, PGlite a Uint8Array: hand out plain Uint8Arrays either way.
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

/** Times are epoch milliseconds (`bigint`, read as JS numbers), the unit of the contract. */
export const epochMs = (name: string) => bigint(name, { mode: "number" });

/** The statement's start time: every default of one INSERT gets the same instant (created = updated). */
export const nowMs = sql`(extract(epoch from statement_timestamp()) * 1000)::bigint`;
