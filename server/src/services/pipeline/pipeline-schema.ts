import { sql } from "drizzle-orm";
import { index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { organizations } from "../../auth/auth-schema.js";
import { epochMs, nowMs } from "../../db/column-types.js";
import { storedJson } from "../../db/stored-json.js";

/** The tables of the pipeline catalog: destinations and the pipelines bound to them. */

/** Facets of a destination, as stored (the enum's lower-case name without prefix). */
export const destinationFacets = ["vector", "table", "object", "graph"] as const;
export type StoredFacet = (typeof destinationFacets)[number];

/**
 * Where pipelines write: one row per vector collection, table or object output of a bucket. The
 * facet's config is kept as the proto3 JSON of its message (VectorConfig, TableConfig or
 * ObjectConfig), so contract fields added later need no migration.
 */
export const pipelineDestinations = pgTable(
  "pipeline_destinations",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** Bucket name: buckets live in another service, so this is a name, not a reference. */
    bucket: text("bucket").notNull(),
    facet: text("facet", { enum: destinationFacets }).notNull(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    status: text("status", { enum: ["active", "error"] })
      .notNull()
      .default("active"),
    engineId: text("engine_id").notNull().default(""),
    config: storedJson("config"),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  // A collection (or table, or output) name is unique per facet in a bucket: ALREADY_EXISTS.
  (t) => [uniqueIndex("pipeline_destinations_name").on(t.orgId, t.bucket, t.facet, t.name)],
);

/**
 * Pipelines: a script template run over ingested objects, bound to a destination or free. When a
 * destination goes, its pipelines stay, free (the teardown deletes pipelines before destinations).
 */
export const pipelinePipelines = pgTable(
  "pipeline_pipelines",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    orgId: uuid("org_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    bucket: text("bucket").notNull(),
    name: text("name").notNull(),
    scriptTemplate: text("script_template").notNull(),
    /** The options object (JSON); null when none were given. */
    options: storedJson("options"),
    destinationId: uuid("destination_id").references(() => pipelineDestinations.id, { onDelete: "set null" }),
    createdAt: epochMs("created_at").notNull().default(nowMs),
    updatedAt: epochMs("updated_at").notNull().default(nowMs),
  },
  (t) => [
    // Listing a bucket in creation order (also the gRPC keyset order).
    index("pipeline_pipelines_bucket").on(t.orgId, t.bucket, t.createdAt, t.id),
    index("pipeline_pipelines_destination").on(t.destinationId),
  ],
);
