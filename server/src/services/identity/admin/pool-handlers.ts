import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityAdminImplementation } from "../../../../../gen/openapi/identity-admin/handler.js";
import { createConnectionStore } from "../connection-store.js";
import { createPoolStore, poolRefOf, type PoolPatch } from "../pool-store.js";
import { assertPoolWritable } from "../user-store-migration/migration-lock.js";
import { adminPool, callerOf, poolNotFound, type AdminDeps } from "./admin-pool-access.js";
import { readAdminDocument } from "./admin-document.js";
import { poolView } from "./pool-view.js";

type PoolOperations = Pick<
  IdentityAdminImplementation,
  "checkIdentityHealth" | "listPools" | "createPool" | "getPool" | "updatePool" | "deletePool" | "rotatePoolKeys"
>;

/** Pools: create, read, the partial update of their documents, delete, key rotation; and the liveness probe. */
export function createPoolHandlers(deps: AdminDeps): PoolOperations {
  const { services } = deps;
  return {
    async checkIdentityHealth() {
      return { status: 200, body: { status: "ok", service: "identity" } };
    },

    async listPools(_input, context) {
      const caller = callerOf(context);
      const records = await deps.pools.list(caller.orgId);
      return { status: 200, body: { pools: records.map((record) => poolView(deps, caller.orgName, record)) } };
    },

    async createPool({ body }, context) {
      const caller = callerOf(context);
      // The pool and its enabled `local` connection commit together, so a new pool signs users in at once.
      const record = await services.db.transaction(async (tx) => {
        const created = await createPoolStore(tx).create(caller.orgId, {
          name: body.name,
          ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
        });
        await createConnectionStore(tx).upsert(poolRefOf(created), { kind: "local", config: {}, enabled: true });
        return created;
      });
      // The first signing key: made now rather than by the first sign-in, so the JWKS is never empty.
      await services.keys.jwks(poolRefOf(record));
      return { status: 200, body: poolView(deps, caller.orgName, record) };
    },

    async getPool({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      return { status: 200, body: poolView(deps, callerOf(context).orgName, pool.record) };
    },

    async updatePool({ path, body }, context) {
      const caller = callerOf(context);
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const patch: PoolPatch = {
        ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
        ...(body.policiesJson !== undefined
          ? { policies: readAdminDocument("policiesJson", body.policiesJson, "PoolPolicies") }
          : {}),
        ...(body.settingsJson !== undefined
          ? { settings: readAdminDocument("settingsJson", body.settingsJson, "PoolSettings") }
          : {}),
        ...(body.brandingJson !== undefined
          ? { branding: readAdminDocument("brandingJson", body.brandingJson, "BrandingDocument") }
          : {}),
        ...(body.roleCatalogJson !== undefined
          ? { roleCatalog: readAdminDocument("roleCatalogJson", body.roleCatalogJson, "RoleCatalog") }
          : {}),
      };
      const record =
        Object.keys(patch).length === 0 ? pool.record : await deps.pools.update(caller.orgId, path.pool, patch);
      if (!record) throw poolNotFound(path.pool);
      return { status: 200, body: poolView(deps, caller.orgName, record) };
    },

    async deletePool({ path, body }, context) {
      const caller = callerOf(context);
      const record = await deps.pools.get(caller.orgId, path.pool);
      if (!record) throw poolNotFound(path.pool);
      assertPoolWritable(record);
      if (record.state === "migrating") {
        throw new ConnectError(
          `pool "${path.pool}" has a user-store migration running; abort it first`,
          Code.FailedPrecondition,
        );
      }
      // A store of the pool's own keeps its users unless asked; the managed store's rows go with the pool.
      if (body?.wipeBucketData)
        await services.userStores.erase(poolRefOf(record), {
          description: record.userStore,
          sealedUrl: record.sealedUserStoreUrl,
        });
      if (!(await deps.pools.delete(caller.orgId, path.pool))) throw poolNotFound(path.pool);
      return { status: 200, body: {} };
    },

    async rotatePoolKeys({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      return { status: 200, body: { key: await services.keys.rotate(pool.ref) } };
    },
  };
}
