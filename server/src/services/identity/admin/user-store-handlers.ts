import type { IdentityAdminImplementation } from "../../../../../gen/openapi/identity-admin/handler.js";
import { migrationControl } from "../user-store-migration/migration-control.js";
import { adminPool, callerOf, type AdminDeps } from "./admin-pool-access.js";
import { poolView } from "./pool-view.js";

type UserStoreOperations = Pick<
  IdentityAdminImplementation,
  "setUserStore" | "startUserStoreMigration" | "abortUserStoreMigration"
>;

/**
 * The pool's user store: re-point it (no copy), migrate it live, abort a migration. Abort stays
 * open while the pool is locked: it is how an operator ends a locked phase that takes too long.
 */
export function createUserStoreHandlers(deps: AdminDeps): UserStoreOperations {
  const control = migrationControl({
    db: deps.services.db,
    directory: deps.services.userStores,
    now: deps.services.now,
  });
  return {
    async setUserStore({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const record = await control.setUserStore(pool.record, body.userStore);
      return { status: 200, body: await poolView(deps, callerOf(context).orgName, record) };
    },

    async startUserStoreMigration({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const record = await control.start(pool.record, { target: body.target, keepSource: body.keepSource });
      return { status: 200, body: await poolView(deps, callerOf(context).orgName, record) };
    },

    async abortUserStoreMigration({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      const record = await control.abort(pool.record);
      return { status: 200, body: await poolView(deps, callerOf(context).orgName, record) };
    },
  };
}
