import { hash, randomBytes } from "node:crypto";

/**
 * The secret of an organization API key: `dk_` followed by 32 random bytes in base64url (43
 * characters). Only its hash is stored; the secret itself is shown once, on issue and on rotation.
 *
 * The hash is a plain SHA-256, not a password hash (bcrypt, scrypt, argon2): those slow hashes
 * exist to make guessing low-entropy human passwords expensive. A secret of 256 random bits cannot
 * be guessed whatever the hash costs, so a slow hash would add nothing but latency to every
 * request. A fast, deterministic hash also lets the key be found by an index lookup on the hash,
 * with no per-key salt to try and no secret-dependent comparison in application code.
 */

export const apiKeySecretPrefix = "dk_";

/** Characters of the secret kept in clear as `secret_prefix`: `dk_` and 7 random characters (42 bits). */
export const displayPrefixLength = 10;

const secretBytes = 32;
const secretPattern = /^dk_[A-Za-z0-9_-]{43}$/;

/** A new secret, from the operating system's CSPRNG. */
export function generateApiKeySecret(): string {
  return apiKeySecretPrefix + randomBytes(secretBytes).toString("base64url");
}

/** The stored form of a secret: SHA-256, lower-case hex. */
export function hashApiKeySecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

/**
 * The same SHA-256, as bytes: the credential cache's key, compared in constant time. Computed on
 * every authenticated call, by the one-shot `hash`, a third of what a Hash object costs.
 */
export function apiKeySecretDigest(secret: string): Buffer {
  return hash("sha256", secret, "buffer");
}

/** The first characters of a secret, enough to recognise a key in a listing, far too few to use it. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, displayPrefixLength);
}

/** Whether a bearer token has the shape of an API key secret (says nothing about its validity). */
export function isApiKeySecretShape(token: string): boolean {
  return secretPattern.test(token);
}

/** A freshly generated secret with the two values stored for it. */
export interface IssuedSecret {
  readonly secret: string;
  readonly hash: string;
  readonly prefix: string;
}

export function issueSecret(): IssuedSecret {
  const secret = generateApiKeySecret();
  return { secret, hash: hashApiKeySecret(secret), prefix: displayPrefix(secret) };
}
