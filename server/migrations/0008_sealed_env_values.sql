-- Environment values are sealed by the secret box (sealed_value). A migration cannot reach the
-- server's key, so the values already stored stay in "value" until start-up seals them and clears
-- it; the check keeps every row one or the other.
ALTER TABLE "env_vars" ALTER COLUMN "value" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "script_env_vars" ALTER COLUMN "value" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "env_vars" ADD COLUMN "sealed_value" "bytea";--> statement-breakpoint
ALTER TABLE "script_env_vars" ADD COLUMN "sealed_value" "bytea";--> statement-breakpoint
ALTER TABLE "env_vars" ADD CONSTRAINT "env_vars_sealed_or_plaintext" CHECK (("env_vars"."sealed_value" is null) <> ("env_vars"."value" is null));--> statement-breakpoint
ALTER TABLE "script_env_vars" ADD CONSTRAINT "script_env_vars_sealed_or_plaintext" CHECK (("script_env_vars"."sealed_value" is null) <> ("script_env_vars"."value" is null));