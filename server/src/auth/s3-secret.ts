import { createHmac } from "node:crypto";
import type { SecretBox } from "../crypto/secret-box.js";

/**
 * The S3 credentials of an organization API key. The access key id is the key's id (its uuid);
 * the secret access key is derived from the key's secret, so a client that holds the API key can
 * compute it with no extra call (the SDK's `s3Credentials` does):
 *
 *     secretAccessKey = base64url(HMAC-SHA256(key = <API key secret>, message = "platform-s3-v1"))
 *
 * The server stores only a hash of the API key secret, from which this cannot be computed, and
 * SigV4 verification needs the secret access key itself: so the derived value is sealed with the
 * SecretBox in `api_keys.s3_secret_sealed` whenever the server sees the API key secret (on issue,
 * on rotation, and for older keys the first time their bearer secret is verified).
 */
export const S3_SECRET_DERIVATION_MESSAGE = "platform-s3-v1";

export function deriveS3SecretAccessKey(apiKeySecret: string): string {
  return createHmac("sha256", apiKeySecret).update(S3_SECRET_DERIVATION_MESSAGE).digest("base64url");
}

/** Bound to the key's id: a sealed value copied to another key's row does not open. */
const associatedData = (keyId: string) => `api_keys.s3_secret_sealed:${keyId}`;

export function sealS3Secret(box: SecretBox, keyId: string, apiKeySecret: string): Uint8Array {
  return box.seal(new TextEncoder().encode(deriveS3SecretAccessKey(apiKeySecret)), associatedData(keyId));
}

/** Throws SecretBoxError when the value was sealed with another key or for another API key. */
export function openS3Secret(box: SecretBox, keyId: string, sealed: Uint8Array): string {
  return new TextDecoder().decode(box.open(sealed, associatedData(keyId)));
}
