CREATE TABLE "ingest_job_objects" (
	"job_id" uuid NOT NULL,
	"key" text NOT NULL,
	"change" text DEFAULT 'put' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"tries" integer DEFAULT 0 NOT NULL,
	"thread_id" text DEFAULT '' NOT NULL,
	"etag" text DEFAULT '' NOT NULL,
	"chunks" integer DEFAULT 0 NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	CONSTRAINT "ingest_job_objects_job_id_key_pk" PRIMARY KEY("job_id","key")
);
--> statement-breakpoint
CREATE TABLE "ingest_jobs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"rule_id" text NOT NULL,
	"pipeline_id" text NOT NULL,
	"source_id" text NOT NULL,
	"status" text NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"selection" jsonb NOT NULL,
	"listed" boolean DEFAULT false NOT NULL,
	"objects_total" integer DEFAULT 0 NOT NULL,
	"objects_succeeded" integer DEFAULT 0 NOT NULL,
	"objects_failed" integer DEFAULT 0 NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"started_at" bigint DEFAULT 0 NOT NULL,
	"finished_at" bigint DEFAULT 0 NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ingest_object_states" (
	"org_id" uuid NOT NULL,
	"pipeline_id" text NOT NULL,
	"source_id" text NOT NULL,
	"key" text NOT NULL,
	"etag" text NOT NULL,
	"chunks" integer NOT NULL,
	"ingested_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "ingest_object_states_org_id_pipeline_id_source_id_key_pk" PRIMARY KEY("org_id","pipeline_id","source_id","key")
);
--> statement-breakpoint
CREATE TABLE "ingest_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"name" text NOT NULL,
	"source_id" text NOT NULL,
	"pipeline_id" text NOT NULL,
	"trigger" text NOT NULL,
	"schedule_cron" text DEFAULT '' NOT NULL,
	"next_run_at" bigint DEFAULT 0 NOT NULL,
	"filter_prefix" text DEFAULT '' NOT NULL,
	"filter_content_types" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ingest_sync_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"source_id" text NOT NULL,
	"kind" text NOT NULL,
	"state" text NOT NULL,
	"objects_discovered" integer DEFAULT 0 NOT NULL,
	"jobs_started" integer DEFAULT 0 NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"finished_at" bigint DEFAULT 0 NOT NULL,
	"rule_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"full_resync" boolean DEFAULT false NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_destinations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"facet" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"engine_id" text DEFAULT '' NOT NULL,
	"config" jsonb,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_pipelines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"name" text NOT NULL,
	"script_template" text NOT NULL,
	"options" jsonb,
	"destination_id" uuid,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "source_credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"provider" text NOT NULL,
	"type" text NOT NULL,
	"source_id" uuid,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"expires_at" bigint DEFAULT 0 NOT NULL,
	"sealed_secret" "bytea" NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "source_sources" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"provider" text NOT NULL,
	"credential_id" uuid,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"internal" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "storage_buckets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "storage_buckets_org_name_unique" UNIQUE("org_id","name")
);
--> statement-breakpoint
CREATE TABLE "storage_objects" (
	"bucket_id" uuid NOT NULL,
	"key" text NOT NULL,
	"size" bigint NOT NULL,
	"content_type" text NOT NULL,
	"etag" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"blob_key" text NOT NULL,
	"last_modified" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "storage_objects_bucket_id_key_pk" PRIMARY KEY("bucket_id","key")
);
--> statement-breakpoint
CREATE TABLE "storage_upload_parts" (
	"upload_id" uuid NOT NULL,
	"part_number" integer NOT NULL,
	"size" bigint NOT NULL,
	"etag" text NOT NULL,
	"blob_key" text NOT NULL,
	"last_modified" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "storage_upload_parts_upload_id_part_number_pk" PRIMARY KEY("upload_id","part_number")
);
--> statement-breakpoint
CREATE TABLE "storage_uploads" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"bucket_id" uuid NOT NULL,
	"key" text NOT NULL,
	"content_type" text NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vector_databases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'creating' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vector_engines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"database_id" uuid,
	"endpoint" text DEFAULT '' NOT NULL,
	"port" integer DEFAULT 0 NOT NULL,
	"db_name" text DEFAULT '' NOT NULL,
	"db_user" text DEFAULT '' NOT NULL,
	"sealed_password" "bytea",
	"implicit" boolean DEFAULT false NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "s3_secret_sealed" "bytea";--> statement-breakpoint
ALTER TABLE "ingest_job_objects" ADD CONSTRAINT "ingest_job_objects_job_id_ingest_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."ingest_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_jobs" ADD CONSTRAINT "ingest_jobs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_object_states" ADD CONSTRAINT "ingest_object_states_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_rules" ADD CONSTRAINT "ingest_rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_sync_runs" ADD CONSTRAINT "ingest_sync_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_destinations" ADD CONSTRAINT "pipeline_destinations_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_pipelines" ADD CONSTRAINT "pipeline_pipelines_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_pipelines" ADD CONSTRAINT "pipeline_pipelines_destination_id_pipeline_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."pipeline_destinations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_credentials" ADD CONSTRAINT "source_credentials_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_credentials" ADD CONSTRAINT "source_credentials_source_id_source_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."source_sources"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_sources" ADD CONSTRAINT "source_sources_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_sources" ADD CONSTRAINT "source_sources_credential_id_source_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."source_credentials"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_buckets" ADD CONSTRAINT "storage_buckets_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_objects" ADD CONSTRAINT "storage_objects_bucket_id_storage_buckets_id_fk" FOREIGN KEY ("bucket_id") REFERENCES "public"."storage_buckets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_upload_parts" ADD CONSTRAINT "storage_upload_parts_upload_id_storage_uploads_id_fk" FOREIGN KEY ("upload_id") REFERENCES "public"."storage_uploads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_uploads" ADD CONSTRAINT "storage_uploads_bucket_id_storage_buckets_id_fk" FOREIGN KEY ("bucket_id") REFERENCES "public"."storage_buckets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vector_databases" ADD CONSTRAINT "vector_databases_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vector_engines" ADD CONSTRAINT "vector_engines_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vector_engines" ADD CONSTRAINT "vector_engines_database_id_vector_databases_id_fk" FOREIGN KEY ("database_id") REFERENCES "public"."vector_databases"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ingest_jobs_bucket_idx" ON "ingest_jobs" USING btree ("org_id","bucket","created_at");--> statement-breakpoint
CREATE INDEX "ingest_jobs_claim_idx" ON "ingest_jobs" USING btree ("status","lease_expires_at");--> statement-breakpoint
CREATE INDEX "ingest_rules_bucket_idx" ON "ingest_rules" USING btree ("org_id","bucket","created_at");--> statement-breakpoint
CREATE INDEX "ingest_rules_schedule_idx" ON "ingest_rules" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "ingest_sync_runs_source_idx" ON "ingest_sync_runs" USING btree ("org_id","source_id","kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_destinations_name" ON "pipeline_destinations" USING btree ("org_id","bucket","facet","name");--> statement-breakpoint
CREATE INDEX "pipeline_pipelines_bucket" ON "pipeline_pipelines" USING btree ("org_id","bucket","created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_pipelines_destination" ON "pipeline_pipelines" USING btree ("destination_id");--> statement-breakpoint
CREATE INDEX "source_credentials_org_idx" ON "source_credentials" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "source_sources_name_idx" ON "source_sources" USING btree ("org_id","bucket","name");--> statement-breakpoint
CREATE UNIQUE INDEX "source_sources_internal_idx" ON "source_sources" USING btree ("org_id","bucket") WHERE "source_sources"."internal";--> statement-breakpoint
CREATE INDEX "storage_uploads_bucket_idx" ON "storage_uploads" USING btree ("bucket_id","key","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "vector_databases_name" ON "vector_databases" USING btree ("name");--> statement-breakpoint
CREATE INDEX "vector_databases_org" ON "vector_databases" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "vector_engines_bucket" ON "vector_engines" USING btree ("org_id","bucket");--> statement-breakpoint
CREATE INDEX "vector_engines_provisioning" ON "vector_engines" USING btree ("lease_expires_at") WHERE status in ('PENDING', 'PROVISIONING');--> statement-breakpoint
CREATE INDEX "vector_engines_database" ON "vector_engines" USING btree ("database_id");