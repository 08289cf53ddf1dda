/**
 * Values this process read from the database, kept while no change notice says they moved on
 * (see `db/change-notices.ts`). An entry is trusted for `ttlMs` at most: the bound on a change
 * whose notice was lost. The oldest entry goes first past `maxEntries`.
 *
 * A read that raced a change must not store what it read before the change: take `ticket()`
 * before reading and hand it to `put`, which stores nothing when any change arrived since.
 */
export interface FollowedCache<K, V> {
  /** The value stored for `key`, if one is and it is still fresh. */
  get(key: K): V | undefined;
  ticket(): number;
  put(key: K, value: V, ticket: number): void;
  /** Drops every entry `changed` says a change touched. */
  forget(changed: (key: K, value: V) => boolean): void;
  /** Drops everything: notices may have been missed. */
  flush(): void;
  readonly size: number;
}

export interface FollowedCacheOptions {
  readonly maxEntries?: number;
  readonly ttlMs?: number;
  readonly now?: () => number;
}

const defaultFollowedCacheOptions = { maxEntries: 10_000, ttlMs: 15_000 } as const;

export function createFollowedCache<K, V>(options: FollowedCacheOptions = {}): FollowedCache<K, V> {
  const maxEntries = options.maxEntries ?? defaultFollowedCacheOptions.maxEntries;
  const ttlMs = options.ttlMs ?? defaultFollowedCacheOptions.ttlMs;
  const now = options.now ?? Date.now;
  // Insertion order is age: the first entry is the oldest, the one to evict.
  const entries = new Map<K, { readonly value: V; readonly storedAt: number }>();
  let generation = 0;

  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (now() - entry.storedAt >= ttlMs) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    ticket: () => generation,
    put(key, value, ticket) {
      if (ticket !== generation || maxEntries <= 0) return;
      entries.delete(key);
      while (entries.size >= maxEntries) entries.delete(entries.keys().next().value as K);
      entries.set(key, { value, storedAt: now() });
    },
    forget(changed) {
      generation++;
      for (const [key, entry] of entries) if (changed(key, entry.value)) entries.delete(key);
    },
    flush() {
      generation++;
      entries.clear();
    },
    get size() {
      return entries.size;
    },
  };
}
