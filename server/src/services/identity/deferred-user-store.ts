import type { UserStore } from "./user-store.js";

/**
 * A user store reached only when first used (a remote database to connect to and prepare): request
 * handling stays synchronous up to the first user operation, which then waits for `load` or fails
 * with its error.
 */
export function deferredUserStore(load: () => Promise<UserStore>): UserStore {
  let store: Promise<UserStore> | undefined;
  const get = () => (store ??= load());
  return {
    create: async (input) => (await get()).create(input),
    get: async (userId, options) => (await get()).get(userId, options),
    getWithTenants: async (userId) => (await get()).getWithTenants(userId),
    liveByIds: async (userIds) => (await get()).liveByIds(userIds),
    findByEmail: async (email) => (await get()).findByEmail(email),
    list: async (query) => (await get()).list(query),
    update: async (userId, patch) => (await get()).update(userId, patch),
    setPassword: async (userId, hash, options) => (await get()).setPassword(userId, hash, options),
    setRoles: async (userId, roles) => (await get()).setRoles(userId, roles),
    setBanned: async (userId, banned) => (await get()).setBanned(userId, banned),
    delete: async (userId, options) => (await get()).delete(userId, options),
    restore: async (userId) => (await get()).restore(userId),
  };
}
