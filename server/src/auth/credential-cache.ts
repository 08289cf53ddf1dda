import { timingSafeEqual } from "node:crypto";
import type { Principal } from "./principal.js";

/**
 * What an IAM write changed about credentials, as every process hears it: one key (revoked,
 * rotated, or its organization-wide roles changed), or everything (a flush).
 */
export type CredentialChange = { readonly keyId: string } | { readonly all: true };

/** A key the database accepted: what a call needs to go on without asking it again. */
export interface VerifiedCredential {
  readonly principal: Principal;
  readonly secretPrefix: string;
  /** Epoch milliseconds, 0 for a key that does not expire: checked on every use. */
  readonly expiresAt: number;
  /** When `last_used_at` was last written (or read); the auth path moves it forward. */
  lastUsedAt: number;
}

export interface CredentialCacheOptions {
  /** Entries kept at most; the oldest goes first. */
  readonly maxEntries?: number;
  /**
   * How long an entry is trusted without a change notice: the bound on a revocation whose notice
   * was lost. A LISTEN connection that drops and comes back flushes everything anyway.
   */
  readonly ttlMs?: number;
  readonly now?: () => number;
}

/**
 * Verified API keys of this process, by the SHA-256 of their secret. Only keys the database
 * accepted are stored, so what it holds is bounded by the keys really issued (and by
 * `maxEntries`), never by what callers send.
 *
 * A lookup that raced a change must not store what it read before the change: `ticket()` is taken
 * before reading the database and `put` drops the entry when any change arrived since.
 */
export interface CredentialCache<C extends VerifiedCredential = VerifiedCredential> {
  /** The credential stored for this secret hash, if one is and it is still fresh. */
  get(secretHash: Buffer): C | undefined;
  ticket(): number;
  put(secretHash: Buffer, credential: C, ticket: number): void;
  apply(change: CredentialChange): void;
  flush(): void;
  readonly size: number;
}

export const defaultCredentialCacheOptions = { maxEntries: 10_000, ttlMs: 15_000 } as const;

interface Entry<C> {
  readonly hash: Buffer;
  readonly credential: C;
  readonly storedAt: number;
}

/** Bytes of the hash the map is indexed by; the whole hash is then compared in constant time. */
const indexBytes = 16;

export function createCredentialCache<C extends VerifiedCredential = VerifiedCredential>(
  options: CredentialCacheOptions = {},
): CredentialCache<C> {
  const maxEntries = options.maxEntries ?? defaultCredentialCacheOptions.maxEntries;
  const ttlMs = options.ttlMs ?? defaultCredentialCacheOptions.ttlMs;
  const now = options.now ?? Date.now;
  // Insertion order is age: the first entry is the oldest, the one to evict.
  const entries = new Map<string, Entry<C>>();
  let generation = 0;

  return {
    get(secretHash) {
      const index = secretHash.toString("hex", 0, indexBytes);
      const entry = entries.get(index);
      if (!entry) return undefined;
      if (now() - entry.storedAt >= ttlMs) {
        entries.delete(index);
        return undefined;
      }
      // The index is half the hash; the rest is compared without an early exit.
      return timingSafeEqual(entry.hash, secretHash) ? entry.credential : undefined;
    },
    ticket: () => generation,
    put(secretHash, credential, ticket) {
      if (ticket !== generation || maxEntries <= 0) return;
      const index = secretHash.toString("hex", 0, indexBytes);
      entries.delete(index);
      while (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(index, { hash: Buffer.from(secretHash), credential, storedAt: now() });
    },
    apply(change) {
      generation++;
      if ("all" in change) return entries.clear();
      for (const [index, entry] of entries) {
        if (entry.credential.principal.keyId === change.keyId) entries.delete(index);
      }
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
