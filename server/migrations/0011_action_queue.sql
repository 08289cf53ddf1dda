CREATE TABLE "action_queue" (
	"run_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"action_id" text NOT NULL,
	"batch_id" text DEFAULT '' NOT NULL,
	"reverse_ts" text NOT NULL,
	"selection" jsonb NOT NULL,
	"params" jsonb NOT NULL,
	"selection_label" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"thread_id" text DEFAULT '' NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"enqueued_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"started_at" bigint DEFAULT 0 NOT NULL,
	"finished_at" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "action_queue_status" CHECK ("action_queue"."status" in ('queued', 'running', 'done'))
);
--> statement-breakpoint
ALTER TABLE "action_queue" ADD CONSTRAINT "action_queue_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "action_queue_open" ON "action_queue" USING btree ("status","org_id","enqueued_at");--> statement-breakpoint
CREATE INDEX "action_queue_bucket" ON "action_queue" USING btree ("org_id","bucket","status");