import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkBlobPrefix } from "./blob-key.js";

/** Where objects are stored: a folder, or a bucket (and folder in it) of an S3-compatible service. */
export type BlobLocation =
  | { readonly kind: "filesystem"; readonly dir: string }
  | {
      readonly kind: "s3";
      readonly bucket: string;
      /** Folder inside the bucket, ending in `/`; empty uses the whole bucket. */
      readonly prefix: string;
      /** Service address (MinIO, Ceph...); absent means AWS itself. */
      readonly endpoint: string | undefined;
      /** Absent leaves the region to the SDK's usual sources (AWS_REGION, profiles). */
      readonly region: string | undefined;
      readonly forcePathStyle: boolean;
    };

const S3_PARAMETERS = new Set(["endpoint", "region", "forcePathStyle"]);

/**
 * Reads a blob URL: `file:///path`, or `s3://bucket/optional/prefix?endpoint=…&region=…&forcePathStyle=true`.
 * Throws an Error whose message says what is wrong; the caller names the setting.
 */
export function parseBlobLocation(text: string): BlobLocation {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL (file:///path or s3://bucket/prefix)`);
  }
  if (url.protocol === "file:") {
    if (url.search || url.hash) throw new Error("a file: URL takes no query or fragment");
    return { kind: "filesystem", dir: resolve(fileURLToPath(url)) };
  }
  if (url.protocol !== "s3:") throw new Error(`scheme ${url.protocol} is not file: or s3:`);
  if (url.username || url.password) {
    throw new Error("an s3: URL carries no credentials (they come from AWS_ACCESS_KEY_ID and the SDK's usual sources)");
  }
  const bucket = url.hostname;
  // Bucket naming rules of S3: 3 to 63 lower-case letters, digits, dots and hyphens.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`"${bucket}" is not a valid bucket name`);
  const path = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  const prefix = path === "" ? "" : `${path}/`;
  if (prefix) {
    try {
      checkBlobPrefix(prefix);
    } catch (error) {
      throw new Error(`the prefix ${(error as Error).message}`);
    }
  }
  for (const name of url.searchParams.keys()) {
    if (!S3_PARAMETERS.has(name)) throw new Error(`unknown parameter "${name}" (endpoint, region or forcePathStyle)`);
  }
  const endpoint = url.searchParams.get("endpoint") ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/?#]+\/?$/.test(endpoint)) {
    throw new Error(`endpoint "${endpoint}" must be an http:// or https:// base address`);
  }
  const pathStyle = url.searchParams.get("forcePathStyle") ?? "false";
  if (pathStyle !== "true" && pathStyle !== "false") throw new Error("forcePathStyle must be true or false");
  return {
    kind: "s3",
    bucket,
    prefix,
    endpoint,
    region: url.searchParams.get("region") || undefined,
    forcePathStyle: pathStyle === "true",
  };
}
