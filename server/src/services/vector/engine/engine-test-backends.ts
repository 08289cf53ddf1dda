import { randomUUID } from "node:crypto";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import postgres from "postgres";
import { pgliteExecutor, postgresExecutor, type SqlExecutor } from "./sql-executor.js";

/** A database the engine tests run on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export interface EngineBackend {
  readonly name: "pglite" | "postgres";
  open(): Promise<{ executor: SqlExecutor; close(): Promise<void> }>;
}

export const engineBackends: EngineBackend[] = [
  {
    name: "pglite",
    async open() {
      const db = await PGlite.create({ extensions: { vector } });
      await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
      return { executor: pgliteExecutor(db), close: () => db.close() };
    },
  },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: "postgres" as const,
          async open() {
            const sql = postgres(process.env.TEST_DATABASE_URL as string, { max: 4, onnotice: () => {} });
            await sql`CREATE EXTENSION IF NOT EXISTS vector`;
            return { executor: postgresExecutor(sql), close: () => sql.end({ timeout: 5 }) };
          },
        },
      ]
    : []),
];

/** A physical name no other test run uses (PostgreSQL is shared between runs). */
export function testPhysicalName(): string {
  return `t_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
