import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import {
  registryBlobs,
  registryManifestReferences,
  registryManifests,
  registryRepositories,
  registryRepositoryBlobs,
  registryUploads,
} from "../registry-schema.js";
import { collectGarbage } from "./garbage-collector.js";

let database: TestDatabase;
let blobs: BlobStore;
let blobDir: string;

beforeAll(async () => {
  database = await openTestDatabase();
  blobDir = await mkdtemp(join(tmpdir(), "registry-gc-"));
  blobs = createFilesystemBlobStore(blobDir);
});
afterAll(async () => {
  await database?.close();
  await rm(blobDir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const options = (now: number) => ({ graceMs: HOUR, uploadExpiryMs: 24 * HOUR, now: () => now });

async function repository(orgId: string, name: string): Promise<string> {
  const [row] = await database.db.insert(registryRepositories).values({ orgId, name }).returning();
  return row!.id;
}

/** A blob as a finished upload leaves it: bytes, row and the repository's link. */
async function blob(orgId: string, repositoryId: string, digest: string): Promise<string> {
  const key = `registry/blobs/${orgId}/sha256/${digest.slice(7)}`;
  await blobs.put(key, new TextEncoder().encode(digest), { contentType: "application/octet-stream" });
  await database.db.insert(registryBlobs).values({ orgId, digest, size: digest.length, storageKey: key });
  await database.db.insert(registryRepositoryBlobs).values({ repositoryId, digest });
  return key;
}

async function reference(repositoryId: string, manifestDigest: string, childDigest: string): Promise<void> {
  await database.db.insert(registryManifests).values({
    repositoryId,
    digest: manifestDigest,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    content: new Uint8Array([123, 125]),
    totalSize: 2,
  });
  await database.db
    .insert(registryManifestReferences)
    .values({ repositoryId, manifestDigest, childDigest, kind: "blob" });
}

const digest = (c: string) => `sha256:${c.repeat(64)}`;

describe("registry garbage collection", () => {
  it("removes blobs no manifest references once their grace period is over, and keeps the rest", async () => {
    const orgId = await database.createOrganization();
    const repo = await repository(orgId, "app");
    const usedKey = await blob(orgId, repo, digest("a"));
    const orphanKey = await blob(orgId, repo, digest("b"));
    await reference(repo, digest("f"), digest("a"));

    // Within the grace period nothing goes: a push uploads its layers before its manifest.
    expect(await collectGarbage(database.db, blobs, options(Date.now()))).toEqual({ uploads: 0, blobs: 0 });
    const later = Date.now() + 2 * HOUR;
    expect((await collectGarbage(database.db, blobs, options(later))).blobs).toBe(1);
    expect(await blobs.stat(orphanKey)).toBeUndefined();
    expect(await blobs.stat(usedKey)).toBeDefined();
    const rows = await database.db
      .select({ digest: registryBlobs.digest })
      .from(registryBlobs)
      .where(eq(registryBlobs.orgId, orgId));
    expect(rows.map((r) => r.digest)).toEqual([digest("a")]);
  });

  it("frees a manifest's blobs after the manifest is deleted", async () => {
    const orgId = await database.createOrganization();
    const repo = await repository(orgId, "app");
    const key = await blob(orgId, repo, digest("c"));
    await reference(repo, digest("e"), digest("c"));
    const later = Date.now() + 2 * HOUR;
    expect((await collectGarbage(database.db, blobs, options(later))).blobs).toBe(0);
    await database.db.delete(registryManifestReferences).where(eq(registryManifestReferences.repositoryId, repo));
    await database.db.delete(registryManifests).where(eq(registryManifests.repositoryId, repo));
    expect((await collectGarbage(database.db, blobs, options(later))).blobs).toBe(1);
    expect(await blobs.stat(key)).toBeUndefined();
  });

  it("keeps a blob another repository of the organization references", async () => {
    const orgId = await database.createOrganization();
    const first = await repository(orgId, "first");
    const second = await repository(orgId, "second");
    const key = await blob(orgId, first, digest("d"));
    await reference(second, digest("9"), digest("d"));
    expect((await collectGarbage(database.db, blobs, options(Date.now() + 2 * HOUR))).blobs).toBe(0);
    expect(await blobs.stat(key)).toBeDefined();
  });

  it("removes uploads left idle past their expiry, with their parts", async () => {
    const orgId = await database.createOrganization();
    const repo = await repository(orgId, "app");
    const id = crypto.randomUUID();
    const partKey = `registry/uploads/${id}/0`;
    await blobs.put(partKey, new Uint8Array([1, 2, 3]), { contentType: "application/octet-stream" });
    await database.db
      .insert(registryUploads)
      .values({ id, repositoryId: repo, size: 3, parts: [{ key: partKey, size: 3, sha256: "x" }] });
    expect((await collectGarbage(database.db, blobs, options(Date.now() + HOUR))).uploads).toBe(0);
    expect((await collectGarbage(database.db, blobs, options(Date.now() + 25 * HOUR))).uploads).toBe(1);
    expect(await blobs.stat(partKey)).toBeUndefined();
  });
});
