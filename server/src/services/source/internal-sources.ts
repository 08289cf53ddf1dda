import type { Database } from "../../db/database.js";
import { createSourceStore } from "./source-store.js";

/**
 * What the bucket code calls: every bucket has one internal source, made with the bucket and gone
 * with it. Both calls are idempotent, so the bucket code may call them after its own commit and
 * again on a retry; pass a transaction as `db` to make them part of the bucket's.
 */
export interface InternalSources {
  /** Creates the bucket's internal source unless it exists; answers its id. */
  ensureInternalSource(orgId: string, bucket: string): Promise<string>;
  /** Deletes every source of a deleted bucket, the internal one included; answers how many. */
  deleteBucketSources(orgId: string, bucket: string): Promise<number>;
}

export function createInternalSources(db: Database): InternalSources {
  return {
    async ensureInternalSource(orgId, bucket) {
      return (await createSourceStore(db).ensureInternal(orgId, bucket)).id;
    },
    async deleteBucketSources(orgId, bucket) {
      return createSourceStore(db).deleteBucket(orgId, bucket);
    },
  };
}

/** The bucket's internal source, created unless it exists: `ensureInternalSource(db, orgId, bucket)`. */
export function ensureInternalSource(db: Database, orgId: string, bucket: string): Promise<string> {
  return createInternalSources(db).ensureInternalSource(orgId, bucket);
}
