CREATE TABLE "action_output_saves" (
	"org_id" uuid NOT NULL,
	"run_id" text NOT NULL,
	"owner" text NOT NULL,
	"taken_at" bigint NOT NULL,
	CONSTRAINT "action_output_saves_org_id_run_id_pk" PRIMARY KEY("org_id","run_id")
);
--> statement-breakpoint
ALTER TABLE "action_output_saves" ADD CONSTRAINT "action_output_saves_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;