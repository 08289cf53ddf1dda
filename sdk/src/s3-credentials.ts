/** The S3 credentials of an organization API key, in the shape the AWS SDKs take. */
export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/**
 * The S3 credentials of an organization API key, for any S3 client pointed at the platform's S3
 * listener (path-style, region us-east-1): the access key id is the API key's id, and the secret
 * access key is derived from the API key's secret, so it needs no call to the platform:
 *
 *     secretAccessKey = base64url(HMAC-SHA256(key = apiKeySecret, message = "platform-s3-v1"))
 *
 * Rotating the API key changes its S3 secret too; revoking it ends its S3 access. Uses Web Crypto,
 * so it works in Node and browsers alike.
 */
export async function s3Credentials(apiKeyId: string, apiKeySecret: string): Promise<S3Credentials> {
  const encoder = new TextEncoder();
  const key = await globalThis.crypto.subtle.importKey(
    "raw",
    encoder.encode(apiKeySecret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, encoder.encode("platform-s3-v1")));
  let binary = "";
  for (const byte of mac) binary += String.fromCharCode(byte);
  const secretAccessKey = btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return { accessKeyId: apiKeyId, secretAccessKey };
}
