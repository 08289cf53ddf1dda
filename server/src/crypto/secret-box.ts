import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Authenticated encryption of secret values at rest: AES-256-GCM with a fresh random nonce per
 * value. The associated data binds a sealed value to where it belongs (the organization and the
 * slot name), so a value copied into another row, or another organization's row, does not open.
 *
 * Sealed layout: 1 version byte | 12-byte nonce | ciphertext | 16-byte tag. The version byte lets a
 * later format (another cipher, a key id for key rotation) coexist with values already stored.
 */
export interface SecretBox {
  seal(plaintext: Uint8Array, associatedData: string): Uint8Array;
  /** Throws {@link SecretBoxError} when the key, the associated data or the bytes do not match. */
  open(sealed: Uint8Array, associatedData: string): Uint8Array;
  /**
   * A 32-byte key for another use (an HMAC key), derived from the box's key with HKDF-SHA256:
   * the same purpose always gives the same key, and no derived key reveals the box's.
   */
  deriveKey(purpose: string): Uint8Array;
}

/** A sealed value that does not open. Its message never holds key, nonce or value bytes. */
export class SecretBoxError extends Error {
  override readonly name = "SecretBoxError";
}

export const SECRET_KEY_BYTES = 32;
const FORMAT_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const CIPHER = "aes-256-gcm";

export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.byteLength !== SECRET_KEY_BYTES) {
    throw new SecretBoxError(`the secret key must be ${SECRET_KEY_BYTES} bytes, not ${key.byteLength}`);
  }
  // A private copy: a caller that later reuses or zeroes its buffer cannot change this box's key.
  const ownKey = Buffer.from(key);

  return {
    seal(plaintext, associatedData) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv(CIPHER, ownKey, nonce, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(associatedData, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      const sealed = Buffer.concat([Buffer.of(FORMAT_VERSION), nonce, ciphertext, cipher.getAuthTag()]);
      return new Uint8Array(sealed);
    },

    deriveKey(purpose) {
      return new Uint8Array(
        hkdfSync("sha256", ownKey, new Uint8Array(0), `secret-box derived key: ${purpose}`, SECRET_KEY_BYTES),
      );
    },

    open(sealed, associatedData) {
      if (sealed.byteLength < 1 + NONCE_BYTES + TAG_BYTES) throw new SecretBoxError("sealed value is truncated");
      if (sealed[0] !== FORMAT_VERSION)
        throw new SecretBoxError(`sealed value has unknown format version ${sealed[0]}`);
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      const nonce = bytes.subarray(1, 1 + NONCE_BYTES);
      const ciphertext = bytes.subarray(1 + NONCE_BYTES, bytes.byteLength - TAG_BYTES);
      const tag = bytes.subarray(bytes.byteLength - TAG_BYTES);
      const decipher = createDecipheriv(CIPHER, ownKey, nonce, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(associatedData, "utf8"));
      decipher.setAuthTag(tag);
      try {
        return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
      } catch {
        // OpenSSL's own message is generic, but it is replaced anyway so that nothing about the
        // input can ever reach a log through this error.
        throw new SecretBoxError("sealed value does not open: another key, another owner, or altered bytes");
      }
    },
  };
}
