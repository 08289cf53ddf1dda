-- A refresh token's successor is derived from it (HMAC under a key derived from the server secret)
-- instead of being kept sealed on its row for the reuse grace window: the sealed copy and its index go.
DROP INDEX "identity_refresh_tokens_replayable_idx";--> statement-breakpoint
ALTER TABLE "identity_refresh_tokens" DROP COLUMN "sealed_successor";