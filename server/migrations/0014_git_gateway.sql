CREATE TABLE "git_protection_rules" (
	"repo_id" uuid NOT NULL,
	"branch_pattern" text NOT NULL,
	"required_approvals" integer DEFAULT 0 NOT NULL,
	"require_green_checks" boolean DEFAULT false NOT NULL,
	"block_force_push" boolean DEFAULT false NOT NULL,
	"block_deletion" boolean DEFAULT false NOT NULL,
	"block_self_approval" boolean DEFAULT false NOT NULL,
	"dismiss_stale_approvals" boolean DEFAULT false NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "git_repositories" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"visibility" text DEFAULT 'private' NOT NULL,
	"default_branch" text DEFAULT 'main' NOT NULL,
	"size_limit_bytes" bigint,
	"pack_count_limit" integer,
	"size_bytes" bigint DEFAULT 0 NOT NULL,
	"pack_count" integer DEFAULT 0 NOT NULL,
	"lfs_bytes" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "git_ssh_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"owner_principal" text NOT NULL,
	"name" text NOT NULL,
	"key_type" text NOT NULL,
	"fingerprint" text NOT NULL,
	"public_key" text NOT NULL,
	"read_only" boolean DEFAULT false NOT NULL,
	"last_used_at" bigint,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "git_protection_rules" ADD CONSTRAINT "git_protection_rules_repo_id_git_repositories_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."git_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_repositories" ADD CONSTRAINT "git_repositories_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_ssh_keys" ADD CONSTRAINT "git_ssh_keys_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "git_protection_rules_repo_pattern" ON "git_protection_rules" USING btree ("repo_id","branch_pattern");--> statement-breakpoint
CREATE UNIQUE INDEX "git_repositories_org_name" ON "git_repositories" USING btree ("org_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "git_ssh_keys_fingerprint" ON "git_ssh_keys" USING btree ("fingerprint");