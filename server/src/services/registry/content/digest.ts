import { createHash, type Hash } from "node:crypto";
import { OciError } from "../oci/oci-error.js";

/** The digest algorithms the registry verifies, with the length of their hex encoding. */
const algorithms = { sha256: 64, sha512: 128 } as const;
export type DigestAlgorithm = keyof typeof algorithms;

/** A parsed, validated digest: `sha256:<64 lower-case hex>` or `sha512:<128 lower-case hex>`. */
export interface Digest {
  readonly algorithm: DigestAlgorithm;
  readonly hex: string;
  /** The digest as clients write it. */
  readonly text: string;
}

/**
 * Parses a digest named by a client (a path, a `?digest=` or a manifest's descriptor). Anything but
 * a supported algorithm with exactly its length of lower-case hex is DIGEST_INVALID naming `field`.
 */
export function parseDigest(text: string, field = "digest"): Digest {
  const match = /^([a-z0-9]+(?:[+._-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$/.exec(text);
  const shown = JSON.stringify(text.length > 150 ? `${text.slice(0, 150)}…` : text);
  if (!match) throw new OciError("DIGEST_INVALID", `${field} ${shown} is not a digest (algorithm:hex)`);
  const algorithm = match[1]!;
  const hex = match[2]!;
  if (!(algorithm in algorithms)) {
    throw new OciError("DIGEST_INVALID", `${field} ${shown} uses ${algorithm}; supported: sha256, sha512`);
  }
  const length = algorithms[algorithm as DigestAlgorithm];
  if (hex.length !== length || !/^[0-9a-f]+$/.test(hex)) {
    throw new OciError("DIGEST_INVALID", `${field} ${shown}: ${algorithm} takes ${length} lower-case hex digits`);
  }
  return { algorithm: algorithm as DigestAlgorithm, hex, text };
}

/** Whether `text` is a well-formed digest (a manifest reference that is not a tag). */
export function looksLikeDigest(text: string): boolean {
  return text.includes(":");
}

/** A running hash for `algorithm`; `digestOf` finishes it as a digest text. */
export function digestHasher(algorithm: DigestAlgorithm): Hash {
  return createHash(algorithm);
}

export function digestOf(algorithm: DigestAlgorithm, hash: Hash): string {
  return `${algorithm}:${hash.digest("hex")}`;
}

/** The digest of bytes held in memory (a manifest). */
export function digestOfBytes(algorithm: DigestAlgorithm, bytes: Uint8Array): string {
  return digestOf(algorithm, createHash(algorithm).update(bytes));
}
