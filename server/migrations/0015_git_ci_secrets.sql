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
ALTER TABLE "git_ci_secrets" ADD CONSTRAINT "git_ci_secrets_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;