import { Code, ConnectError } from "@connectrpc/connect";
import type { PoolRecord } from "../pool-store.js";

/**
 * Seconds a caller refused during the locked phase is asked to wait (`Retry-After`). The locked
 * phase copies only what changed during the warm copy, so it is meant to last seconds.
 */
export const MIGRATION_RETRY_AFTER_SECONDS = 2;

/**
 * Whether the pool's users are frozen for the last step of a migration: while true, the issuer and
 * every mutating admin call on the pool (except abort) answer 503 with `Retry-After`.
 */
export function poolLockedForMigration(record: Pick<PoolRecord, "migration">): boolean {
  return record.migration?.phase === "locked_delta";
}

/** The 503 a locked pool answers: UNAVAILABLE with `Retry-After` (metadata becomes headers). */
export function migrationLockedError(): ConnectError {
  return new ConnectError("the pool's user store is being migrated; retry shortly", Code.Unavailable, {
    "retry-after": String(MIGRATION_RETRY_AFTER_SECONDS),
  });
}

/** Throws the 503 when the pool is locked; the one-line guard for a mutating handler. */
export function assertPoolWritable(record: Pick<PoolRecord, "migration">): void {
  if (poolLockedForMigration(record)) throw migrationLockedError();
}
