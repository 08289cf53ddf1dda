import { and, eq, sql } from "drizzle-orm";
import type { BlobStore, OpenBlob } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import { perDatabase } from "../../../db/prepared-statements.js";
import { OciError } from "../oci/oci-error.js";
import { registryBlobs, registryRepositoryBlobs, registryUploads } from "../registry-schema.js";
import { digestHasher, digestOf, type Digest } from "./digest.js";
import { assertQuota } from "./quota.js";

const OCTETS = { contentType: "application/octet-stream" } as const;

export const uploadPartKey = (uploadId: string, index: number) => `registry/uploads/${uploadId}/${index}`;
export const uploadPrefix = (uploadId: string) => `registry/uploads/${uploadId}/`;
const blobKey = (orgId: string, digest: Digest) => `registry/blobs/${orgId}/${digest.algorithm}/${digest.hex}`;

export interface UploadPart {
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
}

/** An upload in progress, as its row says. */
export interface UploadState {
  readonly id: string;
  readonly repositoryId: string;
  readonly size: number;
  readonly parts: readonly UploadPart[];
}

export async function findUpload(db: Database, repositoryId: string, uploadId: string): Promise<UploadState> {
  const [row] = /^[0-9a-f-]{36}$/.test(uploadId)
    ? await db
        .select()
        .from(registryUploads)
        .where(and(eq(registryUploads.id, uploadId), eq(registryUploads.repositoryId, repositoryId)))
    : [];
  if (!row)
    throw new OciError(
      "BLOB_UPLOAD_UNKNOWN",
      `upload ${uploadId.slice(0, 64)} is not known: it finished, was cancelled or never began`,
    );
  return row;
}

/**
 * Appends `body` to the upload as one part: written whole to its own object first, then recorded
 * only if the upload is still where this chunk began. A crash mid-chunk leaves no part and the row
 * unchanged; a concurrent chunk that got there first wins and this one is RANGE_INVALID.
 */
export async function appendPart(
  db: Database,
  blobs: BlobStore,
  upload: UploadState,
  body: AsyncIterable<Uint8Array>,
): Promise<UploadState> {
  const key = uploadPartKey(upload.id, upload.parts.length);
  const info = await blobs.write(key, body, OCTETS);
  if (info.size === 0) {
    await blobs.delete(key);
    return upload;
  }
  const part = { key, size: info.size, sha256: info.sha256 };
  const [row] = await db
    .update(registryUploads)
    .set({
      size: sql`${registryUploads.size} + ${info.size}`,
      parts: sql`${registryUploads.parts} || ${JSON.stringify([part])}::jsonb`,
      updatedAt: Date.now(),
    })
    .where(and(eq(registryUploads.id, upload.id), eq(registryUploads.size, upload.size)))
    .returning();
  if (!row) {
    await blobs.delete(key);
    throw new OciError("RANGE_INVALID", "another chunk of this upload was written at the same offset first");
  }
  return row;
}

/**
 * Finishes an upload as the blob `digest`: its bytes verified, then the blob row, the repository's
 * link and the quota check committed together, and the upload gone. A single part whose SHA-256 is
 * the digest becomes the blob as it lies; otherwise the parts are joined into a new object while
 * hashing, which appears only when the digest matched.
 */
export async function completeUpload(
  db: Database,
  blobs: BlobStore,
  orgId: string,
  upload: UploadState,
  digest: Digest,
): Promise<{ size: number }> {
  const single = upload.parts.length === 1 && digest.algorithm === "sha256" && upload.parts[0]!.sha256 === digest.hex;
  let storageKey: string;
  if (single) {
    storageKey = upload.parts[0]!.key;
  } else {
    storageKey = blobKey(orgId, digest);
    const existing = await blobRow(db, orgId, digest.text);
    if (!existing) await blobs.write(storageKey, verifiedJoin(blobs, upload.parts, digest), OCTETS);
    else await verifyDigestOfParts(blobs, upload.parts, digest);
  }
  let kept = false;
  await db
    .transaction(async (tx) => {
      const inserted = await tx
        .insert(registryBlobs)
        .values({ orgId, digest: digest.text, size: upload.size, storageKey })
        .onConflictDoNothing()
        .returning({ storageKey: registryBlobs.storageKey });
      if (inserted.length > 0) {
        // Counted with this blob's row in place: refused, the transaction keeps nothing.
        await assertQuota(tx, orgId, 0);
        kept = true;
      }
      await tx
        .insert(registryRepositoryBlobs)
        .values({ repositoryId: upload.repositoryId, digest: digest.text })
        .onConflictDoNothing();
      await tx.delete(registryUploads).where(eq(registryUploads.id, upload.id));
    })
    .catch(async (error: unknown) => {
      if (!single) await blobs.delete(storageKey).catch(() => {});
      throw error;
    });
  // The parts are no longer needed, except the one that became the blob.
  for (const part of upload.parts) if (!(kept && part.key === storageKey)) await blobs.delete(part.key);
  return { size: upload.size };
}

async function* joinedParts(blobs: BlobStore, parts: readonly UploadPart[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    const open = await blobs.open(part.key);
    if (!open) throw new OciError("BLOB_UPLOAD_INVALID", "a part of this upload is missing: start the upload again");
    yield* open.read() as AsyncIterable<Uint8Array>;
  }
}

/** The parts' bytes, failing at the end (so the object is never stored) when they do not hash to `digest`. */
async function* verifiedJoin(
  blobs: BlobStore,
  parts: readonly UploadPart[],
  digest: Digest,
): AsyncGenerator<Uint8Array> {
  const hash = digestHasher(digest.algorithm);
  for await (const chunk of joinedParts(blobs, parts)) {
    hash.update(chunk);
    yield chunk;
  }
  const actual = digestOf(digest.algorithm, hash);
  if (actual !== digest.text) throw digestMismatch(digest, actual);
}

async function verifyDigestOfParts(blobs: BlobStore, parts: readonly UploadPart[], digest: Digest): Promise<void> {
  const hash = digestHasher(digest.algorithm);
  for await (const chunk of joinedParts(blobs, parts)) hash.update(chunk);
  const actual = digestOf(digest.algorithm, hash);
  if (actual !== digest.text) throw digestMismatch(digest, actual);
}

function digestMismatch(digest: Digest, actual: string): OciError {
  return new OciError("DIGEST_INVALID", `the uploaded content's digest is ${actual}, not ${digest.text}`, {
    digest: digest.text,
  });
}

export async function blobRow(db: Pick<Database, "select">, orgId: string, digest: string, lock?: "share") {
  const query = db
    .select()
    .from(registryBlobs)
    .where(and(eq(registryBlobs.orgId, orgId), eq(registryBlobs.digest, digest)));
  const [row] = lock ? await query.for(lock) : await query;
  return row;
}

// Every blob GET looks its link up: a prepared statement.
const linkedBlob = perDatabase((db) =>
  db
    .select({ storageKey: registryBlobs.storageKey })
    .from(registryRepositoryBlobs)
    .innerJoin(
      registryBlobs,
      and(eq(registryBlobs.orgId, sql.placeholder("orgId")), eq(registryBlobs.digest, registryRepositoryBlobs.digest)),
    )
    .where(
      and(
        eq(registryRepositoryBlobs.repositoryId, sql.placeholder("repositoryId")),
        eq(registryRepositoryBlobs.digest, sql.placeholder("digest")),
      ),
    )
    .prepare("registry_linked_blob"),
);

/** The blob if the repository may serve it (it is linked to it), opened for reading. */
export async function openLinkedBlob(
  db: Database,
  blobs: BlobStore,
  orgId: string,
  repositoryId: string,
  digest: string,
): Promise<OpenBlob | undefined> {
  const [row] = await linkedBlob(db).execute({ orgId, repositoryId, digest });
  return row ? blobs.open(row.storageKey) : undefined;
}

/** Where a mount takes its blob from: a repository the caller may pull. */
export interface MountSource {
  readonly orgId: string;
  readonly repositoryId: string;
}

/**
 * Links a blob into the organization's repository without its bytes being sent again (a mount);
 * false when there is nothing to mount. Without a source, or from the same organization, any blob
 * the organization holds. From another organization's repository the caller may pull (a public
 * one), only a blob that repository serves: the organization then holds it too, with a row of its
 * own naming the same object and counted in its quota (DENIED when it does not fit). The source
 * row is locked (shared) until the link commits, so garbage collection cannot delete it between.
 */
export async function mountBlob(
  db: Database,
  orgId: string,
  repositoryId: string,
  digest: string,
  from?: MountSource,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (from && from.orgId !== orgId) {
      const [source] = await tx
        .select({ size: registryBlobs.size, storageKey: registryBlobs.storageKey })
        .from(registryRepositoryBlobs)
        .innerJoin(
          registryBlobs,
          and(eq(registryBlobs.orgId, from.orgId), eq(registryBlobs.digest, registryRepositoryBlobs.digest)),
        )
        .where(
          and(eq(registryRepositoryBlobs.repositoryId, from.repositoryId), eq(registryRepositoryBlobs.digest, digest)),
        )
        .for("share", { of: registryBlobs });
      if (!source) return false;
      const inserted = await tx
        .insert(registryBlobs)
        .values({ orgId, digest, size: source.size, storageKey: source.storageKey })
        .onConflictDoNothing()
        .returning({ digest: registryBlobs.digest });
      if (inserted.length > 0) await assertQuota(tx, orgId, 0);
    } else if (!(await blobRow(tx, orgId, digest, "share"))) {
      return false;
    }
    await tx.insert(registryRepositoryBlobs).values({ repositoryId, digest }).onConflictDoNothing();
    return true;
  });
}
