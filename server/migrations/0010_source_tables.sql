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
ALTER TABLE "source_credentials" ADD CONSTRAINT "source_credentials_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_credentials" ADD CONSTRAINT "source_credentials_source_id_source_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."source_sources"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_sources" ADD CONSTRAINT "source_sources_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "source_sources" ADD CONSTRAINT "source_sources_credential_id_source_credentials_id_fk" FOREIGN KEY ("credential_id") REFERENCES "public"."source_credentials"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "source_credentials_org_idx" ON "source_credentials" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "source_sources_name_idx" ON "source_sources" USING btree ("org_id","bucket","name");--> statement-breakpoint
CREATE UNIQUE INDEX "source_sources_internal_idx" ON "source_sources" USING btree ("org_id","bucket") WHERE "source_sources"."internal";