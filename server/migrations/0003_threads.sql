CREATE TABLE "thread_events" (
	"thread_id" uuid NOT NULL,
	"sequence" integer NOT NULL,
	"org_id" uuid NOT NULL,
	"step_path" text DEFAULT '' NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "thread_events_thread_id_sequence_pk" PRIMARY KEY("thread_id","sequence")
);
--> statement-breakpoint
CREATE TABLE "thread_steps" (
	"thread_id" uuid NOT NULL,
	"step_path" text NOT NULL,
	"org_id" uuid NOT NULL,
	"step_id" text NOT NULL,
	"name" text NOT NULL,
	"primitive" text NOT NULL,
	"tool" text DEFAULT '' NOT NULL,
	"parent_path" text DEFAULT '' NOT NULL,
	"status" text NOT NULL,
	"input" jsonb,
	"output" jsonb,
	"error" text DEFAULT '' NOT NULL,
	"attempt" integer DEFAULT 1 NOT NULL,
	"wake_at" bigint DEFAULT 0 NOT NULL,
	"started_at" bigint DEFAULT 0 NOT NULL,
	"finished_at" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "thread_steps_thread_id_step_path_pk" PRIMARY KEY("thread_id","step_path")
);
--> statement-breakpoint
CREATE TABLE "threads" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"script_name" text NOT NULL,
	"script_version" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"input" jsonb NOT NULL,
	"env" jsonb NOT NULL,
	"metadata" jsonb NOT NULL,
	"timeout_ms" bigint DEFAULT 0 NOT NULL,
	"deadline_at" bigint DEFAULT 0 NOT NULL,
	"callback_url" text DEFAULT '' NOT NULL,
	"error" text DEFAULT '' NOT NULL,
	"failed_step_path" text DEFAULT '' NOT NULL,
	"current_step_path" text DEFAULT '' NOT NULL,
	"current_step_name" text DEFAULT '' NOT NULL,
	"total_steps" integer DEFAULT 0 NOT NULL,
	"output" jsonb,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"started_at" bigint DEFAULT 0 NOT NULL,
	"finished_at" bigint DEFAULT 0 NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"run_after" bigint DEFAULT 0 NOT NULL,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"cancel_reason" text DEFAULT '' NOT NULL,
	"resume_override" jsonb,
	"resume_count" integer DEFAULT 0 NOT NULL,
	"event_sequence" integer DEFAULT 0 NOT NULL,
	"yield_sequence" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "thread_events" ADD CONSTRAINT "thread_events_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_steps" ADD CONSTRAINT "thread_steps_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "threads" ADD CONSTRAINT "threads_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "threads_runnable_idx" ON "threads" USING btree ("status","run_after");--> statement-breakpoint
CREATE INDEX "threads_org_created_idx" ON "threads" USING btree ("org_id","created_at");