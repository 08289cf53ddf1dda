CREATE TABLE "git_pull_request_comments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"pull_id" uuid NOT NULL,
	"author" text NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "git_pull_request_reviews" (
	"id" uuid PRIMARY KEY NOT NULL,
	"pull_id" uuid NOT NULL,
	"reviewer" text NOT NULL,
	"state" text NOT NULL,
	"commit_sha" text NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "git_pull_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"repo_id" uuid NOT NULL,
	"number" integer NOT NULL,
	"title" text NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"state" text DEFAULT 'open' NOT NULL,
	"head_branch" text NOT NULL,
	"base_branch" text NOT NULL,
	"author" text NOT NULL,
	"merge_method" text,
	"merge_commit_sha" text,
	"merged_head_sha" text,
	"created_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"updated_at" bigint DEFAULT (extract(epoch from statement_timestamp()) * 1000)::bigint NOT NULL,
	"closed_at" bigint,
	"merged_at" bigint
);
--> statement-breakpoint
ALTER TABLE "git_pull_request_comments" ADD CONSTRAINT "git_pull_request_comments_pull_id_git_pull_requests_id_fk" FOREIGN KEY ("pull_id") REFERENCES "public"."git_pull_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_pull_request_reviews" ADD CONSTRAINT "git_pull_request_reviews_pull_id_git_pull_requests_id_fk" FOREIGN KEY ("pull_id") REFERENCES "public"."git_pull_requests"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_pull_requests" ADD CONSTRAINT "git_pull_requests_repo_id_git_repositories_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."git_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "git_pull_request_comments_pull" ON "git_pull_request_comments" USING btree ("pull_id","created_at");--> statement-breakpoint
CREATE INDEX "git_pull_request_reviews_pull" ON "git_pull_request_reviews" USING btree ("pull_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "git_pull_requests_number" ON "git_pull_requests" USING btree ("repo_id","number");--> statement-breakpoint
CREATE INDEX "git_pull_requests_state" ON "git_pull_requests" USING btree ("repo_id","state","number");--> statement-breakpoint
ALTER TABLE "git_checks" ADD CONSTRAINT "git_checks_repo_id_git_repositories_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."git_repositories"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "git_ci_secrets" ADD CONSTRAINT "git_ci_secrets_repo_id_git_repositories_id_fk" FOREIGN KEY ("repo_id") REFERENCES "public"."git_repositories"("id") ON DELETE cascade ON UPDATE no action;