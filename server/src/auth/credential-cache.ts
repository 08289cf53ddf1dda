import { timingSafeEqual } from "node:crypto";
import { createFollowedCache, type FollowedCacheOptions } from "../cache/followed-cache.js";
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

/**
 * Verified API keys of this process, by the SHA-256 of their secret. Only keys the database
 * accepted are stored, so what it holds is bounded by the keys really issued (and by
 * `maxEntries`), never by what callers send. `ttlMs` bounds a revocation whose notice was lost
 * (a LISTEN connection that drops and comes back flushes everything anyway).
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

/** Bytes of the hash the map is indexed by; the whole hash is then compared in constant time. */
const indexBytes = 16;

export function createCredentialCache<C extends VerifiedCredential = VerifiedCredential>(
  options: FollowedCacheOptions = {},
): CredentialCache<C> {
  const entries = createFollowedCache<string, { readonly hash: Buffer; readonly credential: C }>(options);
  const indexOf = (secretHash: Buffer) => secretHash.toString("hex", 0, indexBytes);
  return {
    get(secretHash) {
      const entry = entries.get(indexOf(secretHash));
      // The index is half the hash; the rest is compared without an early exit.
      return entry && timingSafeEqual(entry.hash, secretHash) ? entry.credential : undefined;
    },
    ticket: () => entries.ticket(),
    put(secretHash, credential, ticket) {
      entries.put(indexOf(secretHash), { hash: Buffer.from(secretHash), credential }, ticket);
    },
    apply(change) {
      if ("all" in change) entries.flush();
      else entries.forget((_, entry) => entry.credential.principal.keyId === change.keyId);
    },
    flush: () => entries.flush(),
    get size() {
      return entries.size;
    },
  };
}
