import { S3Client } from "@aws-sdk/client-s3";
import type { BlobLocation } from "./blob-location.js";
import type { BlobStore } from "./blob-store.js";
import { createFilesystemBlobStore } from "./filesystem-blob-store.js";
import { createS3BlobStore } from "./s3-blob-store.js";

/** The object store a location names; S3 credentials come from the SDK's default chain (AWS_* variables, profiles). */
export function createBlobStore(location: BlobLocation): BlobStore {
  if (location.kind === "filesystem") return createFilesystemBlobStore(location.dir);
  const client = new S3Client({
    ...(location.endpoint ? { endpoint: location.endpoint } : {}),
    ...(location.region ? { region: location.region } : {}),
    forcePathStyle: location.forcePathStyle,
  });
  return createS3BlobStore({ client, bucket: location.bucket, prefix: location.prefix });
}
