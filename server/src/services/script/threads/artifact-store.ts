import { and, asc, eq, sql } from "drizzle-orm";
import { BlobKeyError } from "../../../blob/blob-key.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import { threadArtifacts } from "../script-schema.js";
import { invalidInput } from "../tools/tool-error.js";

export type ArtifactRow = typeof threadArtifacts.$inferSelect;

/** The thread and step an artifact is written for. */
export interface ArtifactOwner {
  readonly threadId: string;
  readonly orgId: string;
  readonly stepPath: string;
}

export interface ArtifactStore {
  /**
   * Stores a thread's file under `path` (relative, as artifact.write checks it), replacing the one
   * already there, and records it for ListArtifacts.
   */
  write(owner: ArtifactOwner, path: string, contentType: string, bytes: Uint8Array): Promise<ArtifactRow>;
  /** The thread's artifacts, sorted by path (code point order on every engine). */
  list(orgId: string, threadId: string): Promise<ArtifactRow[]>;
}

/** Where a thread's artifact lives in object storage; deleting `threads/<id>/` removes all of a thread's files. */
export function artifactKey(threadId: string, path: string): string {
  return `threads/${threadId}/artifacts/${path}`;
}

/** The database time in epoch milliseconds, as the schema's defaults compute it. */
const nowMs = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * Thread artifacts: the bytes in object storage, a row per file in `thread_artifacts`. The object
 * is written first and the row after, so a row never names bytes that are not there; a write that
 * fails between the two leaves an unlisted object, which the next write of the path replaces.
 */
export function createArtifactStore(db: Database, blobs: BlobStore): ArtifactStore {
  return {
    async write(owner, path, contentType, bytes) {
      let info;
      try {
        info = await blobs.put(artifactKey(owner.threadId, path), bytes, { contentType });
      } catch (error) {
        // A name or type the store cannot take is the step's input at fault: retrying will not help.
        if (error instanceof BlobKeyError) throw invalidInput(`artifact.write: ${error.message}`);
        throw error;
      }
      const values = {
        contentType: info.contentType,
        sizeBytes: info.size,
        sha256: info.sha256,
        stepPath: owner.stepPath,
      };
      const [row] = await db
        .insert(threadArtifacts)
        .values({ threadId: owner.threadId, orgId: owner.orgId, path, ...values })
        .onConflictDoUpdate({
          target: [threadArtifacts.threadId, threadArtifacts.path],
          set: { ...values, updatedAt: nowMs },
        })
        .returning();
      return row!;
    },

    list(orgId, threadId) {
      return db
        .select()
        .from(threadArtifacts)
        .where(and(eq(threadArtifacts.orgId, orgId), eq(threadArtifacts.threadId, threadId)))
        .orderBy(asc(sql`${threadArtifacts.path} collate "C"`));
    },
  };
}
