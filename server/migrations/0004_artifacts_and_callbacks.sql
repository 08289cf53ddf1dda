CREATE TABLE "callback_signing_keys" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"sealed_key" "bytea" NOT NULL,
	"sealed_previous_key" "bytea",
	"previous_expires_at" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "thread_artifacts" (
	"thread_id" uuid NOT NULL,
	"path" text NOT NULL,
	"org_id" uuid NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"step_path" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "thread_artifacts_thread_id_path_pk" PRIMARY KEY("thread_id","path")
);
--> statement-breakpoint
CREATE TABLE "thread_callbacks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"thread_id" uuid NOT NULL,
	"org_id" uuid NOT NULL,
	"url" text NOT NULL,
	"body" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint DEFAULT 0 NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"last_error" text DEFAULT '' NOT NULL,
	"last_status_code" integer DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"delivered_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "callback_signing_keys" ADD CONSTRAINT "callback_signing_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_artifacts" ADD CONSTRAINT "thread_artifacts_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_callbacks" ADD CONSTRAINT "thread_callbacks_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "thread_callbacks_due_idx" ON "thread_callbacks" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "thread_callbacks_thread_idx" ON "thread_callbacks" USING btree ("thread_id");