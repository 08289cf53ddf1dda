CREATE TABLE "git_check_log_chunks" (
	"check_id" uuid NOT NULL,
	"offset" bigint NOT NULL,
	"text" text NOT NULL,
	CONSTRAINT "git_check_log_chunks_check_id_offset_pk" PRIMARY KEY("check_id","offset")
);
--> statement-breakpoint
CREATE TABLE "git_checks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"repo_id" uuid NOT NULL,
	"head_sha" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"conclusion" text,
	"details_url" text,
	"output_summary" text,
	"log_bytes" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"completed_at" bigint
);
--> statement-breakpoint
CREATE TABLE "git_ci_secrets" (
	"org_id" uuid NOT NULL,
	"scope" text NOT NULL,
	"repo_id" uuid,
	"environment" text,
	"name" text NOT NULL,
	"sealed_value" "bytea" NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "git_ci_secrets_org_id_scope_name_pk" PRIMARY KEY("org_id","scope","name")
);
--> statement-breakpoint
ALTER TABLE "git_check_log_chunks" ADD CONSTRAINT "git_check_log_chunks_check_id_git_checks_id_fk" FOREIGN KEY ("check_id") REFERENCES "public"."git_checks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_checks" ADD CONSTRAINT "git_checks_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_ci_secrets" ADD CONSTRAINT "git_ci_secrets_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "git_checks_commit" ON "git_checks" USING btree ("repo_id","head_sha");