import { createHash, randomBytes } from "node:crypto";

/**
 * Bearer secrets the issuer hands out and later recognises (refresh tokens, authorization codes,
 * e-mailed link tokens): 32 random bytes, base64url. Only the SHA-256 of a token is stored, so a
 * leaked database does not hold usable tokens; with 256 bits of entropy a fast hash is enough.
 */
export interface OpaqueToken {
  readonly token: string;
  readonly hash: string;
}

export const OPAQUE_TOKEN_BYTES = 32;

export function newOpaqueToken(): OpaqueToken {
  const token = randomBytes(OPAQUE_TOKEN_BYTES).toString("base64url");
  return { token, hash: hashOpaqueToken(token) };
}

/** The stored form of a token: SHA-256, base64url. */
export function hashOpaqueToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}
