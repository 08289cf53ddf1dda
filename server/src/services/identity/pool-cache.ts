import type { PoolContext } from "./pool-context.js";

/**
 * How long a resolved pool is reused. It must stay under the user-store migration's lock drain
 * (one second): a process that resolved a pool just before its migration began re-reads it before
 * the locked phase reads the changes, so no write of that process can land after them unseen.
 */
export const POOL_CACHE_TTL_MS = 500;
const CACHE_LIMIT = 10_000;

/**
 * Pools as the issuer last resolved them, by `{org}/{pool}`. Every issuer request needs its pool
 * (record, settings, role catalog, user store), and reading it costs as much as the rest of a
 * token refresh's queries, so a resolved pool is reused for {@link POOL_CACHE_TTL_MS}.
 *
 * Freshness: the admin plane forgets a pool after each of its writes to it in this process, so
 * the next issuer request here sees the change; another server process on the same database sees
 * it within the TTL. A pool in the middle of a user-store migration is never kept: its lock and
 * its store are read on every request. Unknown pools are not kept either.
 */
export interface PoolCache {
  /** The cached pool, or what `load` finds (kept when it may be). */
  resolve(org: string, pool: string, load: () => Promise<PoolContext | undefined>): Promise<PoolContext | undefined>;
  forget(org: string, pool: string): void;
}

export function createPoolCache(options: { readonly now?: () => number; readonly ttlMs?: number } = {}): PoolCache {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? POOL_CACHE_TTL_MS;
  const entries = new Map<string, { readonly pool: PoolContext; readonly expiresAt: number }>();
  // Bumped by every forget: a load that began before one may have read the old row, and is not kept.
  let generation = 0;
  const keyOf = (org: string, pool: string) => `${org}/${pool}`;

  return {
    async resolve(org, pool, load) {
      const key = keyOf(org, pool);
      const entry = entries.get(key);
      if (entry && entry.expiresAt > now()) return entry.pool;
      const started = generation;
      const loaded = await load();
      if (loaded && !loaded.record.migration && started === generation) {
        if (entries.size >= CACHE_LIMIT) entries.clear();
        entries.set(key, { pool: loaded, expiresAt: now() + ttlMs });
      } else {
        entries.delete(key);
      }
      return loaded;
    },

    forget(org, pool) {
      generation++;
      entries.delete(keyOf(org, pool));
    },
  };
}
