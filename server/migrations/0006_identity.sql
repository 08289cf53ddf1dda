CREATE TABLE "identity_authorization_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"code_challenge" text NOT NULL,
	"scope" text DEFAULT '' NOT NULL,
	"nonce" text DEFAULT '' NOT NULL,
	"tenant" text DEFAULT '' NOT NULL,
	"auth_time" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"consumed_at" bigint DEFAULT 0 NOT NULL,
	"family_id" uuid,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_connections" (
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "identity_connections_pool_id_kind_pk" PRIMARY KEY("pool_id","kind")
);
--> statement-breakpoint
CREATE TABLE "identity_email_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"consumed_at" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_login_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"client_id" text NOT NULL,
	"redirect_uri" text NOT NULL,
	"state" text DEFAULT '' NOT NULL,
	"code_challenge" text NOT NULL,
	"scope" text DEFAULT '' NOT NULL,
	"nonce" text DEFAULT '' NOT NULL,
	"tenant" text DEFAULT '' NOT NULL,
	"expires_at" bigint NOT NULL,
	"completed_at" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_mail_outbox" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"recipient" text NOT NULL,
	"purpose" text NOT NULL,
	"subject" text NOT NULL,
	"sealed_body" "bytea" NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint DEFAULT 0 NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"last_error" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"sent_at" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_memberships" (
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"tenant_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"roles" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "identity_memberships_tenant_id_user_id_pk" PRIMARY KEY("tenant_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "identity_pool_keys" (
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"kid" text NOT NULL,
	"public_jwk" jsonb NOT NULL,
	"sealed_private_key" "bytea" NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"retired_at" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "identity_pool_keys_pool_id_kid_pk" PRIMARY KEY("pool_id","kid")
);
--> statement-breakpoint
CREATE TABLE "identity_pools" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"name" text NOT NULL,
	"display_name" text DEFAULT '' NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"policies" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"branding" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"role_catalog" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"user_store" jsonb DEFAULT '{"kind":"managed"}'::jsonb NOT NULL,
	"sealed_user_store_url" "bytea",
	"migration" jsonb,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "identity_pools_name_unique" UNIQUE("org_id","name"),
	CONSTRAINT "identity_pools_scope_unique" UNIQUE("org_id","id")
);
--> statement-breakpoint
CREATE TABLE "identity_rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"hits" integer DEFAULT 0 NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_refresh_families" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"client_id" text DEFAULT '' NOT NULL,
	"tenant" text DEFAULT '' NOT NULL,
	"scope" text DEFAULT '' NOT NULL,
	"auth_time" bigint NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"last_used_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"revoked_at" bigint DEFAULT 0 NOT NULL,
	"revoked_reason" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_refresh_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"family_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"sealed_successor" "bytea",
	"successor_id" uuid,
	"rotated_at" bigint DEFAULT 0 NOT NULL,
	"expires_at" bigint NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "identity_refresh_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "identity_tenants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"slug" text NOT NULL,
	"display_name" text DEFAULT '' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	CONSTRAINT "identity_tenants_slug_unique" UNIQUE("pool_id","slug")
);
--> statement-breakpoint
CREATE TABLE "identity_user_store_migrations" (
	"pool_id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"source" jsonb NOT NULL,
	"sealed_source_url" "bytea",
	"sealed_target_url" "bytea",
	"watermark" bigint NOT NULL,
	"cursor" text DEFAULT '' NOT NULL,
	"lease_owner" text DEFAULT '' NOT NULL,
	"lease_expires_at" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "identity_users" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"org_id" uuid NOT NULL,
	"pool_id" uuid NOT NULL,
	"email" text NOT NULL,
	"email_normalized" text COLLATE "C" NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"password_hash" text,
	"app_roles" text[] DEFAULT '{}'::text[] NOT NULL,
	"banned" boolean DEFAULT false NOT NULL,
	"deleted_at" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "identity_authorization_codes" ADD CONSTRAINT "identity_authorization_codes_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_connections" ADD CONSTRAINT "identity_connections_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_email_tokens" ADD CONSTRAINT "identity_email_tokens_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_login_transactions" ADD CONSTRAINT "identity_login_transactions_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_mail_outbox" ADD CONSTRAINT "identity_mail_outbox_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_memberships" ADD CONSTRAINT "identity_memberships_tenant_id_identity_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."identity_tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_memberships" ADD CONSTRAINT "identity_memberships_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_pool_keys" ADD CONSTRAINT "identity_pool_keys_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_pools" ADD CONSTRAINT "identity_pools_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_refresh_families" ADD CONSTRAINT "identity_refresh_families_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_refresh_tokens" ADD CONSTRAINT "identity_refresh_tokens_family_id_identity_refresh_families_id_fk" FOREIGN KEY ("family_id") REFERENCES "public"."identity_refresh_families"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_refresh_tokens" ADD CONSTRAINT "identity_refresh_tokens_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_tenants" ADD CONSTRAINT "identity_tenants_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_user_store_migrations" ADD CONSTRAINT "identity_user_store_migrations_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "identity_users" ADD CONSTRAINT "identity_users_pool_fk" FOREIGN KEY ("org_id","pool_id") REFERENCES "public"."identity_pools"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "identity_email_tokens_user_idx" ON "identity_email_tokens" USING btree ("pool_id","user_id","purpose");--> statement-breakpoint
CREATE INDEX "identity_mail_outbox_due_idx" ON "identity_mail_outbox" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "identity_memberships_user_idx" ON "identity_memberships" USING btree ("pool_id","user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "identity_pool_keys_one_active" ON "identity_pool_keys" USING btree ("pool_id") WHERE state = 'active';--> statement-breakpoint
CREATE INDEX "identity_rate_limits_expiry_idx" ON "identity_rate_limits" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "identity_refresh_families_user_idx" ON "identity_refresh_families" USING btree ("pool_id","user_id");--> statement-breakpoint
CREATE INDEX "identity_refresh_tokens_family_idx" ON "identity_refresh_tokens" USING btree ("family_id");--> statement-breakpoint
CREATE INDEX "identity_refresh_tokens_replayable_idx" ON "identity_refresh_tokens" USING btree ("successor_id") WHERE sealed_successor is not null;--> statement-breakpoint
CREATE INDEX "identity_user_store_migrations_lease_idx" ON "identity_user_store_migrations" USING btree ("lease_expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "identity_users_email_unique" ON "identity_users" USING btree ("pool_id","email_normalized") WHERE deleted_at = 0;--> statement-breakpoint
CREATE INDEX "identity_users_list_idx" ON "identity_users" USING btree ("pool_id","email_normalized","id");