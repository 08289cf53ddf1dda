import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Database } from "../../../db/database.js";
import { callbackSigningKeys } from "../script-schema.js";
import type { SecretBox } from "../../../crypto/secret-box.js";

/** Standard Webhooks: a key is 24 to 64 random bytes, shown as `whsec_` + base64. */
export const SIGNING_KEY_BYTES = 32;
export const SIGNING_KEY_PREFIX = "whsec_";
/** How long the previous key keeps signing after a rotation (Svix's and Stripe's default grace). */
export const PREVIOUS_KEY_GRACE_MS = 24 * 60 * 60 * 1000;

export interface SigningKeys {
  readonly current: Uint8Array;
  readonly createdAt: number;
  /** The key before the last rotation, while it still signs. */
  readonly previous: Uint8Array | undefined;
  readonly previousExpiresAt: number;
}

export function formatSigningKey(key: Uint8Array): string {
  return SIGNING_KEY_PREFIX + Buffer.from(key).toString("base64");
}

/**
 * Each organization's callback signing keys, sealed at rest with the secret box (the holder of
 * the key can forge deliveries, so it is kept like a secret). Created on first use.
 */
export function createCallbackSigningKeys(deps: { db: Database; box: SecretBox; now?: () => number }) {
  const { db, box } = deps;
  const now = deps.now ?? Date.now;
  // Bound to the organization: a sealed key copied into another organization's row does not open.
  const boundTo = (orgId: string) => `callback-signing-key:${orgId}`;

  function open(row: typeof callbackSigningKeys.$inferSelect, at: number): SigningKeys {
    const live = row.sealedPreviousKey !== null && row.previousExpiresAt > at;
    return {
      current: box.open(row.sealedKey, boundTo(row.orgId)),
      createdAt: row.createdAt,
      previous: live ? box.open(row.sealedPreviousKey!, boundTo(row.orgId)) : undefined,
      previousExpiresAt: live ? row.previousExpiresAt : 0,
    };
  }

  return {
    /** The organization's keys, made on first use (two racing first uses agree on one key). */
    async get(orgId: string): Promise<SigningKeys> {
      const at = now();
      const [existing] = await db.select().from(callbackSigningKeys).where(eq(callbackSigningKeys.orgId, orgId));
      if (existing) return open(existing, at);
      const sealedKey = box.seal(randomBytes(SIGNING_KEY_BYTES), boundTo(orgId));
      await db.insert(callbackSigningKeys).values({ orgId, sealedKey, createdAt: at }).onConflictDoNothing();
      const [row] = await db.select().from(callbackSigningKeys).where(eq(callbackSigningKeys.orgId, orgId));
      return open(row!, at);
    },

    /** A new key; the current one keeps signing beside it for {@link PREVIOUS_KEY_GRACE_MS}. */
    async rotate(orgId: string): Promise<SigningKeys> {
      await this.get(orgId);
      const at = now();
      const sealedKey = box.seal(randomBytes(SIGNING_KEY_BYTES), boundTo(orgId));
      const [row] = await db
        .update(callbackSigningKeys)
        .set({
          sealedKey,
          sealedPreviousKey: sql`${callbackSigningKeys.sealedKey}`,
          previousExpiresAt: at + PREVIOUS_KEY_GRACE_MS,
          createdAt: at,
        })
        .where(eq(callbackSigningKeys.orgId, orgId))
        .returning();
      return open(row!, at);
    },
  };
}

export type CallbackSigningKeys = ReturnType<typeof createCallbackSigningKeys>;
