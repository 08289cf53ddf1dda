CREATE TABLE "script_versions" (
	"org_id" uuid NOT NULL,
	"script_name" text NOT NULL,
	"version" integer NOT NULL,
	"source" text NOT NULL,
	"source_sha256" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"contract" jsonb NOT NULL,
	"tools_required" text[] NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "script_versions_org_id_script_name_version_pk" PRIMARY KEY("org_id","script_name","version")
);
--> statement-breakpoint
CREATE TABLE "scripts" (
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"active_version" integer NOT NULL,
	"latest_version" integer NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "scripts_org_id_name_pk" PRIMARY KEY("org_id","name")
);
--> statement-breakpoint
ALTER TABLE "script_versions" ADD CONSTRAINT "script_versions_org_id_script_name_scripts_org_id_name_fk" FOREIGN KEY ("org_id","script_name") REFERENCES "public"."scripts"("org_id","name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scripts" ADD CONSTRAINT "scripts_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;