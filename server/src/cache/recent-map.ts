/**
 * A map that keeps its `capacity` most recently used entries: reading an entry makes it the
 * newest, and adding one past the capacity drops the oldest. For caches of values that are
 * expensive to build and never change once built (compiled schemas, parsed scripts).
 */
export class RecentMap<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting moves the entry to the newest end.
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  /** The cached value, or `build(key)`'s, which is kept (a build that throws keeps nothing). */
  getOrBuild(key: K, build: (key: K) => V): V {
    let value = this.get(key);
    if (value === undefined) {
      value = build(key);
      this.set(key, value);
    }
    return value;
  }
}
