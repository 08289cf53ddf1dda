import type { VectorConnection } from "./vector-db-host.js";

/**
 * The process-wide pools of the engines' databases, one per database, opened on first use. At
 * most `capacity` stay open: the least recently used is closed when another is needed (its
 * in-flight statements finish first, postgres-js ends gracefully), so a server with many buckets
 * holds a bounded number of connections. A pool whose opening failed is not kept.
 */
export class EngineConnections {
  readonly #capacity: number;
  /** Insertion order is recency: a hit moves its entry to the end. */
  readonly #open = new Map<string, Promise<VectorConnection>>();
  #closed = false;

  constructor(capacity = 32) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The pool for `key`, opened with `open` when missing. */
  async get(key: string, open: () => Promise<VectorConnection>): Promise<VectorConnection> {
    if (this.#closed) throw new Error("the vector engine connections are closed");
    let entry = this.#open.get(key);
    if (entry) {
      this.#open.delete(key);
      this.#open.set(key, entry);
      return entry;
    }
    entry = open();
    this.#open.set(key, entry);
    entry.catch(() => {
      if (this.#open.get(key) === entry) this.#open.delete(key);
    });
    while (this.#open.size > this.#capacity) {
      const [oldest] = this.#open.keys();
      if (oldest === undefined) break;
      this.#closeEntry(oldest);
    }
    return entry;
  }

  /** Closes the pools whose key starts with `prefix` (an engine reconfigured or deleted). */
  async evict(prefix: string): Promise<void> {
    const keys = [...this.#open.keys()].filter((key) => key.startsWith(prefix));
    await Promise.all(keys.map((key) => this.#closeEntry(key)));
  }

  get size(): number {
    return this.#open.size;
  }

  /** Closes every pool; at server shutdown. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#open.keys()].map((key) => this.#closeEntry(key)));
  }

  async #closeEntry(key: string): Promise<void> {
    const entry = this.#open.get(key);
    this.#open.delete(key);
    if (!entry) return;
    try {
      await (await entry).close();
    } catch {
      // A pool that never opened, or is already gone: nothing left to close.
    }
  }
}
