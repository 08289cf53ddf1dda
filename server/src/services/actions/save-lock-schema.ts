import { pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { epochMs } from "../../db/column-types.js";
import { organizations } from "../../auth/auth-schema.js";

/**
 * A SaveActionOutput in progress, one row per run: saves of one run take turns, across processes,
 * because each reads the manifest's `promoted`, writes the output and writes the manifest back.
 * The row goes when the save ends; one left by a process that died lapses after a while.
 */
export const actionOutputSaves = pgTable(
  "action_output_saves",
  {
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    runId: text("run_id").notNull(),
    owner: text("owner").notNull(),
    takenAt: epochMs("taken_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.orgId, table.runId] })],
);
