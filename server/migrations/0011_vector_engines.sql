CREATE TABLE "vector_databases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"status" text DEFAULT 'creating' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vector_engines" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"bucket" text NOT NULL,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"error_message" text DEFAULT '' NOT NULL,
	"database_id" uuid,
	"endpoint" text DEFAULT '' NOT NULL,
	"port" integer DEFAULT 0 NOT NULL,
	"db_name" text DEFAULT '' NOT NULL,
	"db_user" text DEFAULT '' NOT NULL,
	"sealed_password" "bytea",
	"implicit" boolean DEFAULT false NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "vector_databases" ADD CONSTRAINT "vector_databases_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vector_engines" ADD CONSTRAINT "vector_engines_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vector_engines" ADD CONSTRAINT "vector_engines_database_id_vector_databases_id_fk" FOREIGN KEY ("database_id") REFERENCES "public"."vector_databases"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "vector_databases_name" ON "vector_databases" USING btree ("name");--> statement-breakpoint
CREATE INDEX "vector_databases_org" ON "vector_databases" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "vector_engines_bucket" ON "vector_engines" USING btree ("org_id","bucket");--> statement-breakpoint
CREATE INDEX "vector_engines_provisioning" ON "vector_engines" USING btree ("lease_expires_at") WHERE status in ('PENDING', 'PROVISIONING');--> statement-breakpoint
CREATE INDEX "vector_engines_database" ON "vector_engines" USING btree ("database_id");