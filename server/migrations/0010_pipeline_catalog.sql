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
ALTER TABLE "pipeline_destinations" ADD CONSTRAINT "pipeline_destinations_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_pipelines" ADD CONSTRAINT "pipeline_pipelines_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_pipelines" ADD CONSTRAINT "pipeline_pipelines_destination_id_pipeline_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."pipeline_destinations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pipeline_destinations_name" ON "pipeline_destinations" USING btree ("org_id","bucket","facet","name");--> statement-breakpoint
CREATE INDEX "pipeline_pipelines_bucket" ON "pipeline_pipelines" USING btree ("org_id","bucket","created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_pipelines_destination" ON "pipeline_pipelines" USING btree ("destination_id");