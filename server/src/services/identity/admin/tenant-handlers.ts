import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityAdminImplementation } from "../../../../../gen/openapi/identity-admin/handler.js";
import type { Membership, Tenant } from "../../../../../gen/openapi/identity-admin/types.js";
import { revoke } from "../refresh-families.js";
import { createTenantStore, type MembershipRecord, type TenantRecord } from "../tenant-store.js";
import { adminPool, type AdminDeps } from "./admin-pool-access.js";
import { readAdminDocument } from "./admin-document.js";
import { isoTime } from "./pool-view.js";

type TenantOperations = Pick<
  IdentityAdminImplementation,
  | "listTenants"
  | "createTenant"
  | "updateTenant"
  | "deleteTenant"
  | "setTenantMember"
  | "removeTenantMember"
  | "listTenantMembers"
>;

/**
 * A pool's tenants and their members. Ending a membership (or the tenant) also ends the sessions
 * pinned to that tenant in the same transaction: their tokens name a tenant the user no longer
 * belongs to.
 */
export function createTenantHandlers(deps: AdminDeps): TenantOperations {
  const { services } = deps;
  return {
    async listTenants({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      return { status: 200, body: { tenants: (await pool.tenants.list()).map(tenantView) } };
    },

    async createTenant({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const tenant = await pool.tenants.create({
        slug: body.slug,
        ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
        ...(body.metadataJson !== undefined ? { metadata: readAdminDocument("metadataJson", body.metadataJson) } : {}),
      });
      return { status: 200, body: tenantView(tenant) };
    },

    async updateTenant({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const patch = {
        ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
        ...(body.metadataJson !== undefined ? { metadata: readAdminDocument("metadataJson", body.metadataJson) } : {}),
      };
      const tenant =
        Object.keys(patch).length === 0
          ? await pool.tenants.get(path.tenant)
          : await pool.tenants.update(path.tenant, patch);
      if (!tenant) throw tenantNotFound(path.tenant);
      return { status: 200, body: tenantView(tenant) };
    },

    async deleteTenant({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const deleted = await services.db.transaction(async (tx) => {
        if (!(await createTenantStore(tx, pool.ref).delete(path.tenant))) return false;
        await revoke(tx, pool.ref, { tenant: path.tenant }, "tenant_removed", services.now());
        return true;
      });
      if (!deleted) throw tenantNotFound(path.tenant);
      return { status: 200, body: {} };
    },

    async setTenantMember({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      return { status: 200, body: membershipView(await pool.tenants.setMember(path.tenant, body.userId, body.roles)) };
    },

    async removeTenantMember({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const removed = await services.db.transaction(async (tx) => {
        if (!(await createTenantStore(tx, pool.ref).removeMember(path.tenant, path.userId))) return false;
        await revoke(tx, pool.ref, { tenant: path.tenant, userId: path.userId }, "tenant_removed", services.now());
        return true;
      });
      if (!removed)
        throw new ConnectError(
          `user ${JSON.stringify(path.userId.slice(0, 64))} is not a member of tenant "${path.tenant}"`,
          Code.NotFound,
        );
      return { status: 200, body: {} };
    },

    async listTenantMembers({ path, query }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      const page = await pool.tenants.listMembers(path.tenant, {
        limit: query.limit,
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      });
      return {
        status: 200,
        body: {
          members: page.members.map(membershipView),
          ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        },
      };
    },
  };
}

function tenantNotFound(slug: string): ConnectError {
  return new ConnectError(`tenant "${slug.slice(0, 63)}" not found`, Code.NotFound);
}

function tenantView(tenant: TenantRecord): Tenant {
  return {
    slug: tenant.slug,
    displayName: tenant.displayName,
    metadataJson: JSON.stringify(tenant.metadata),
    createdAt: isoTime(tenant.createdAt),
  };
}

function membershipView(member: MembershipRecord): Membership {
  return { userId: member.userId, email: member.email, roles: member.roles, createdAt: isoTime(member.createdAt) };
}
