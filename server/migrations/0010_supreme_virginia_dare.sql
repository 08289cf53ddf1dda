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
ALTER TABLE "ingest_job_objects" ADD CONSTRAINT "ingest_job_objects_job_id_ingest_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."ingest_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_jobs" ADD CONSTRAINT "ingest_jobs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_object_states" ADD CONSTRAINT "ingest_object_states_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_rules" ADD CONSTRAINT "ingest_rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ingest_sync_runs" ADD CONSTRAINT "ingest_sync_runs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ingest_jobs_bucket_idx" ON "ingest_jobs" USING btree ("org_id","bucket","created_at");--> statement-breakpoint
CREATE INDEX "ingest_jobs_claim_idx" ON "ingest_jobs" USING btree ("status","lease_expires_at");--> statement-breakpoint
CREATE INDEX "ingest_rules_bucket_idx" ON "ingest_rules" USING btree ("org_id","bucket","created_at");--> statement-breakpoint
CREATE INDEX "ingest_rules_schedule_idx" ON "ingest_rules" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "ingest_sync_runs_source_idx" ON "ingest_sync_runs" USING btree ("org_id","source_id","kind","created_at");