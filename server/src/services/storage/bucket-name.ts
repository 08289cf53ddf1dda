import { S3Error } from "./s3/s3-error.js";

/**
 * S3's rules for bucket names (general purpose buckets), so that a name valid here is valid on S3
 * and in a path-style URL: 3 to 63 characters of lower-case letters, digits, dots and hyphens,
 * starting and ending with a letter or digit, no two adjacent dots, not shaped like an IPv4
 * address, and none of the prefixes and suffixes S3 reserves. `healthz` and `readyz` are refused
 * too: on the S3 listener those paths are its health and readiness probes.
 */
export function checkBucketName(name: string): string {
  const refuse = (why: string) =>
    new S3Error("InvalidBucketName", `bucket: ${JSON.stringify(name.slice(0, 70))} ${why}`, {
      BucketName: name.slice(0, 70),
    });
  if (name.length < 3 || name.length > 63) throw refuse("must be 3 to 63 characters long");
  if (!/^[a-z0-9.-]+$/.test(name)) throw refuse("may hold only lower-case letters, digits, dots and hyphens");
  if (!/^[a-z0-9].*[a-z0-9]$/.test(name)) throw refuse("must begin and end with a letter or a digit");
  if (name.includes("..")) throw refuse("must not hold two adjacent dots");
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) throw refuse("must not be formatted as an IP address");
  for (const prefix of ["xn--", "sthree-", "amzn-s3-demo-"])
    if (name.startsWith(prefix)) throw refuse(`must not start with the reserved prefix ${prefix}`);
  for (const suffix of ["-s3alias", "--ol-s3", ".mrap", "--x-s3"])
    if (name.endsWith(suffix)) throw refuse(`must not end with the reserved suffix ${suffix}`);
  if (name === "healthz" || name === "readyz") throw refuse("is reserved for the listener's health probes");
  return name;
}

/** S3's limit on a key: 1024 bytes of UTF-8. */
export const MAX_KEY_BYTES = 1024;

export function checkObjectKey(key: string): string {
  if (key === "") throw new S3Error("InvalidArgument", "key: must not be empty");
  if (Buffer.byteLength(key) > MAX_KEY_BYTES)
    throw new S3Error("KeyTooLongError", `key: longer than ${MAX_KEY_BYTES} bytes`);
  // PostgreSQL text cannot hold NUL.
  if (key.includes("\u0000")) throw new S3Error("InvalidArgument", "key: must not contain NUL");
  return key;
}
