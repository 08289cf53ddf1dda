import type { BlobStore } from "../../blob/blob-store.js";
import type { Database } from "../../db/database.js";
import { createBucketDirectory, type BucketDirectory } from "./bucket-directory.js";
import { createMultipartUploads, type MultipartUploads } from "./multipart-uploads.js";
import { createObjectVersions } from "./object-versions.js";

/** The storage service's parts, sharing one write path and one set of change listeners. */
export interface ObjectStorage {
  /** What other services call: buckets, objects and the change hooks. */
  readonly directory: BucketDirectory;
  /** Multipart uploads, for the S3 listener. */
  readonly uploads: MultipartUploads;
}

export function createObjectStorage(options: {
  readonly db: Database;
  readonly blobs: BlobStore;
  /** A change listener that threw: the change itself stands. */
  readonly onListenerError?: (error: unknown) => void;
  /** Smallest multipart part but the last; S3's 5 MiB unless a test says otherwise. */
  readonly minPartBytes?: number;
}): ObjectStorage {
  const versions = createObjectVersions(options);
  const directory = createBucketDirectory({ ...options, versions });
  const uploads = createMultipartUploads({ ...options, directory, versions });
  return { directory, uploads };
}
