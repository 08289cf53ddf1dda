CREATE TABLE "registry_blobs" (
	"org_id" uuid NOT NULL,
	"digest" text NOT NULL,
	"size" bigint NOT NULL,
	"storage_key" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "registry_blobs_org_id_digest_pk" PRIMARY KEY("org_id","digest")
);
--> statement-breakpoint
CREATE TABLE "registry_manifest_references" (
	"repository_id" uuid NOT NULL,
	"manifest_digest" text NOT NULL,
	"child_digest" text NOT NULL,
	"kind" text NOT NULL,
	CONSTRAINT "registry_manifest_references_repository_id_manifest_digest_child_digest_pk" PRIMARY KEY("repository_id","manifest_digest","child_digest")
);
--> statement-breakpoint
CREATE TABLE "registry_manifests" (
	"repository_id" uuid NOT NULL,
	"digest" text NOT NULL,
	"media_type" text NOT NULL,
	"artifact_type" text,
	"subject_digest" text,
	"annotations" jsonb,
	"content" "bytea" NOT NULL,
	"total_size" bigint NOT NULL,
	"pushed_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"pulled_at" bigint,
	CONSTRAINT "registry_manifests_repository_id_digest_pk" PRIMARY KEY("repository_id","digest")
);
--> statement-breakpoint
CREATE TABLE "registry_quotas" (
	"org_id" uuid PRIMARY KEY NOT NULL,
	"limit_bytes" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "registry_repositories" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"public" boolean DEFAULT false NOT NULL,
	"immutable_tag_patterns" text[] DEFAULT '{}'::text[] NOT NULL,
	"pull_count" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "registry_repository_blobs" (
	"repository_id" uuid NOT NULL,
	"digest" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "registry_repository_blobs_repository_id_digest_pk" PRIMARY KEY("repository_id","digest")
);
--> statement-breakpoint
CREATE TABLE "registry_scans" (
	"org_id" uuid NOT NULL,
	"manifest_digest" text NOT NULL,
	"status" text NOT NULL,
	"severity" text,
	"total" integer,
	"fixable" integer,
	"report" jsonb,
	"feed_version" text,
	"error_message" text,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "registry_scans_org_id_manifest_digest_pk" PRIMARY KEY("org_id","manifest_digest")
);
--> statement-breakpoint
CREATE TABLE "registry_tags" (
	"repository_id" uuid NOT NULL,
	"name" text NOT NULL,
	"manifest_digest" text NOT NULL,
	"pushed_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"pulled_at" bigint,
	CONSTRAINT "registry_tags_repository_id_name_pk" PRIMARY KEY("repository_id","name")
);
--> statement-breakpoint
CREATE TABLE "registry_uploads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"repository_id" uuid NOT NULL,
	"size" bigint DEFAULT 0 NOT NULL,
	"parts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "registry_blobs" ADD CONSTRAINT "registry_blobs_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_manifest_references" ADD CONSTRAINT "registry_manifest_references_repository_id_registry_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."registry_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_manifests" ADD CONSTRAINT "registry_manifests_repository_id_registry_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."registry_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_quotas" ADD CONSTRAINT "registry_quotas_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_repositories" ADD CONSTRAINT "registry_repositories_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_repository_blobs" ADD CONSTRAINT "registry_repository_blobs_repository_id_registry_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."registry_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_scans" ADD CONSTRAINT "registry_scans_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_tags" ADD CONSTRAINT "registry_tags_repository_id_registry_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."registry_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "registry_uploads" ADD CONSTRAINT "registry_uploads_repository_id_registry_repositories_id_fk" FOREIGN KEY ("repository_id") REFERENCES "public"."registry_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "registry_manifest_references_child" ON "registry_manifest_references" USING btree ("repository_id","child_digest");--> statement-breakpoint
CREATE INDEX "registry_manifests_subject" ON "registry_manifests" USING btree ("repository_id","subject_digest");--> statement-breakpoint
CREATE UNIQUE INDEX "registry_repositories_org_name" ON "registry_repositories" USING btree ("org_id","name");--> statement-breakpoint
CREATE INDEX "registry_tags_manifest" ON "registry_tags" USING btree ("repository_id","manifest_digest");--> statement-breakpoint
CREATE INDEX "registry_uploads_updated" ON "registry_uploads" USING btree ("updated_at");