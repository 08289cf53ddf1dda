import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizations } from "../../auth/auth-schema.js";
import { bytea, epochMs, nowMs } from "../../db/column-types.js";

/** The tables of the vector service: bucket engines and the databases auto engines provision. */

export const engineModes = ["auto", "external", "pick"] as const;
export type EngineMode = (typeof engineModes)[number];

/** Engine statuses as the contract spells them. */
export const engineStatuses = ["PENDING", "PROVISIONING", "ACTIVE", "ERROR"] as const;
export type EngineStatus = (typeof engineStatuses)[number];

/** Where a provisioned database lives: a database on the platform's PostgreSQL, or a schema of the embedded vector PGlite. */
export const databaseKinds = ["postgres", "embedded"] as const;
export type DatabaseKind = (typeof databaseKinds)[number];

export const databaseStatuses = ["creating", "running", "error"] as const;
export type DatabaseStatus = (typeof databaseStatuses)[number];

/**
 * Vector databases provisioned by auto engines: what ListVectorDbInstances lists (service type
 * `database`) and what pick mode attaches to. A row outlives the engine that made it unless the
 * engine is deleted with delete_database; `name` is the physical database (or schema) name.
 */
export const vectorDatabases = pgTable(
  "vector_databases",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The bucket whose auto engine provisioned it (the instance's display name). */
    bucket: text("bucket").notNull(),
    kind: text("kind", { enum: databaseKinds }).notNull(),
    /** `vector_<32 hex>`: a PostgreSQL database name, or a schema of the embedded vector database. */
    name: text("name").notNull(),
    status: text("status", { enum: databaseStatuses }).notNull().default("creating"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
  },
  (t) => [uniqueIndex("vector_databases_name").on(t.name), index("vector_databases_org").on(t.orgId, t.createdAt)],
);

/**
 * One engine per bucket. Auto engines are also the provisioning jobs: a row in PENDING or
 * PROVISIONING is claimed by any server process (lease_owner / lease_expires_at, FOR UPDATE SKIP
 * LOCKED), so provisioning survives a crash and runs once across replicas.
 */
export const vectorEngines = pgTable(
  "vector_engines",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    mode: text("mode", { enum: engineModes }).notNull(),
    status: text("status", { enum: engineStatuses }).notNull(),
    errorMessage: text("error_message").notNull().default(""),
    /** The database of an auto or pick engine; null for external engines. */
    databaseId: uuid("database_id").references(() => vectorDatabases.id, { onDelete: "set null" }),
    /** External mode: where the server connects and as whom. */
    endpoint: text("endpoint").notNull().default(""),
    port: integer("port").notNull().default(0),
    dbName: text("db_name").notNull().default(""),
    dbUser: text("db_user").notNull().default(""),
    /** SecretBox-sealed password, bound to the organization and engine id; null without one. */
    sealedPassword: bytea("sealed_password"),
    /** Created on first use by ingestion rather than by ConfigureEngine. */
    implicit: boolean("implicit").notNull().default(false),
    leaseOwner: text("lease_owner").notNull().default(""),
    leaseExpiresAt: epochMs("lease_expires_at").notNull().default(0),
    attempts: integer("attempts").notNull().default(0),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    uniqueIndex("vector_engines_bucket").on(t.orgId, t.bucket),
    // The provisioning worker looks only at engines still on their way.
    index("vector_engines_provisioning")
      .on(t.leaseExpiresAt)
      .where(sql`status in ('PENDING', 'PROVISIONING')`),
    index("vector_engines_database").on(t.databaseId),
  ],
);

export type EngineRow = typeof vectorEngines.$inferSelect;
export type DatabaseRow = typeof vectorDatabases.$inferSelect;
