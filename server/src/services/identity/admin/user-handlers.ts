import { Code, ConnectError } from "@connectrpc/connect";
import type { IdentityAdminImplementation } from "../../../../../gen/openapi/identity-admin/handler.js";
import type { AppUser } from "../../../../../gen/openapi/identity-admin/types.js";
import { createUser } from "../account-flows.js";
import { hashPassword } from "../password-hashing.js";
import { checkPassword } from "../password-policy.js";
import type { AppUserRecord } from "../user-store.js";
import { adminPool, type AdminDeps } from "./admin-pool-access.js";
import { isoTime } from "./pool-view.js";

type UserOperations = Pick<
  IdentityAdminImplementation,
  | "listUsers"
  | "createUser"
  | "getUser"
  | "updateUser"
  | "deleteUser"
  | "setUserPassword"
  | "revokeUserSessions"
  | "replaceUserRoles"
  | "setUserBanned"
  | "listUserTenants"
>;

/** A pool's users: keyset-paginated lists, invitations, soft and hard deletion, passwords, sessions, roles, bans. */
export function createUserHandlers(deps: AdminDeps): UserOperations {
  const { services } = deps;
  return {
    async listUsers({ path, query }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      const page = await pool.users.list({
        limit: query.limit,
        includeDeleted: query.includeDeleted,
        ...(query.emailFilter !== undefined ? { emailFilter: query.emailFilter } : {}),
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      });
      return {
        status: 200,
        body: { users: page.users.map(appUserView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) },
      };
    },

    async createUser({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const user = await createUser(services, pool, {
        email: body.email,
        ...(body.password !== undefined ? { password: body.password } : {}),
        emailVerified: body.emailVerified ?? false,
        appRoles: body.appRoles ?? [],
      });
      return { status: 200, body: appUserView(user) };
    },

    async getUser({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      return {
        status: 200,
        body: appUserView(found(path.userId, await pool.users.get(path.userId, { includeDeleted: true }))),
      };
    },

    async updateUser({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const patch = {
        ...(body.email !== undefined ? { email: body.email } : {}),
        ...(body.emailVerified !== undefined ? { emailVerified: body.emailVerified } : {}),
      };
      const user =
        Object.keys(patch).length === 0
          ? await pool.users.get(path.userId)
          : await pool.users.update(path.userId, patch);
      return { status: 200, body: appUserView(found(path.userId, user)) };
    },

    async deleteUser({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      if (!(await pool.users.delete(path.userId, { hard: body?.hard ?? false }))) throw userNotFound(path.userId);
      return { status: 200, body: {} };
    },

    async setUserPassword({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      const passwordHash = await hashPassword(
        checkPassword(body.password, pool.settings.passwordMinLength, "body.password"),
      );
      const user = await pool.users.setPassword(path.userId, passwordHash, {
        endSessions: body.keepSessions ? false : "password_changed",
      });
      found(path.userId, user);
      return { status: 200, body: {} };
    },

    async revokeUserSessions({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      found(path.userId, await pool.users.get(path.userId));
      await services.families.revokeUser(pool.ref, path.userId, "user_revoked");
      return { status: 200, body: {} };
    },

    async replaceUserRoles({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      return { status: 200, body: appUserView(found(path.userId, await pool.users.setRoles(path.userId, body.roles))) };
    },

    async setUserBanned({ path, body }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: true });
      return {
        status: 200,
        body: appUserView(found(path.userId, await pool.users.setBanned(path.userId, body.banned))),
      };
    },

    async listUserTenants({ path }, context) {
      const pool = await adminPool(deps, context, path.pool, { mutating: false });
      found(path.userId, await pool.users.get(path.userId));
      const tenants = await pool.tenants.userTenants(path.userId);
      return {
        status: 200,
        body: {
          tenants: tenants.map((t) => ({
            slug: t.slug,
            displayName: t.displayName,
            roles: t.roles,
            createdAt: isoTime(t.createdAt),
          })),
        },
      };
    },
  };
}

function userNotFound(userId: string): ConnectError {
  return new ConnectError(`user ${JSON.stringify(userId.slice(0, 64))} not found`, Code.NotFound);
}

function found(userId: string, user: AppUserRecord | undefined): AppUserRecord {
  if (!user) throw userNotFound(userId);
  return user;
}

export function appUserView(user: AppUserRecord): AppUser {
  return {
    id: user.id,
    email: user.email,
    emailVerified: user.emailVerified,
    appRoles: user.appRoles,
    banned: user.banned,
    createdAt: isoTime(user.createdAt),
    ...(user.deletedAt ? { deletedAt: isoTime(user.deletedAt) } : {}),
  };
}
