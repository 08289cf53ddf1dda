import type { Migration } from "../../../../../gen/openapi/identity-admin/types.js";
import { userStoreView } from "../admin/pool-view.js";
import type { PoolRecord } from "../pool-store.js";

/** The pool's migration as GET /pools/{pool} shows it; absent when none runs or failed. */
export function migrationView(record: Pick<PoolRecord, "migration">): Migration | undefined {
  const migration = record.migration;
  if (!migration) return undefined;
  return {
    phase: migration.phase,
    usersTotal: migration.usersTotal,
    usersCopied: migration.usersCopied,
    target: userStoreView(migration.target),
    keepSource: migration.keepSource,
    startedAt: new Date(migration.startedAt).toISOString(),
    updatedAt: new Date(migration.updatedAt).toISOString(),
    ...(migration.error ? { error: migration.error } : {}),
  };
}
