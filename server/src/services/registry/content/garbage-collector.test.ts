import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
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
import { uploadPartKey } from "./blob-content.js";
import { collectGarbage } from "./garbage-collector.js";

let database: TestDatabase;
let blobs: BlobStore;
let blobDir: string;
const HOUR = 60 * 60 * 1000;
const OCTETS = { contentType: "application/octet-stream" };

beforeAll(async () => {
  database = await openTestDatabase();
  blobDir = await mkdtemp(join(tmpdir(), "registry-gc-"));
  blobs = createFilesystemBlobStore(blobDir);
});
afterAll(async () => {
  await database?.close();
  await rm(blobDir, { recursive: true, force: true });
});

const digest = (n: string) => `sha256:${n.repeat(64)}`;

async function repository(orgId: string) {
  const [repo] = await database.db
    .insert(registryRepositories)
    .values({ orgId, name: `app-${Math.random().toString(36).slice(2)}` })
    .returning();
  return repo!.id;
}

/** A blob of the organization, `ageMs` old, linked to `repositoryId` when given. */
async function blob(orgId: string, name: string, ageMs: number, repositoryId?: string) {
  const key = `registry/blobs/${orgId}/sha256/${name.repeat(64)}`;
  await blobs.put(key, new TextEncoder().encode(name), OCTETS);
  const createdAt = Date.now() - ageMs;
  await database.db.insert(registryBlobs).values({ orgId, digest: digest(name), size: 1, storageKey: key, createdAt });
  if (repositoryId) {
    await database.db.insert(registryRepositoryBlobs).values({ repositoryId, digest: digest(name), createdAt });
  }
  return key;
}

async function manifestReferencing(repositoryId: string, child: string) {
  const manifest = digest("e");
  await database.db.insert(registryManifests).values({
    repositoryId,
    digest: manifest,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    content: new TextEncoder().encode("{}"),
    totalSize: 2,
  });
  await database.db
    .insert(registryManifestReferences)
    .values({ repositoryId, manifestDigest: manifest, childDigest: child, kind: "blob" });
}

async function blobExists(orgId: string, name: string) {
  const rows = await database.db
    .select()
    .from(registryBlobs)
    .where(and(eq(registryBlobs.orgId, orgId), eq(registryBlobs.digest, digest(name))));
  return rows.length > 0;
}

describe("collectGarbage", () => {
  it("deletes unreferenced blobs past the grace, keeps referenced and young ones", async () => {
    const orgId = await database.createOrganization();
    const repo = await repository(orgId);
    const referenced = await blob(orgId, "a", 48 * HOUR, repo);
    await manifestReferencing(repo, digest("a"));
    const unused = await blob(orgId, "b", 48 * HOUR, repo);
    const orphan = await blob(orgId, "c", 48 * HOUR);
    const young = await blob(orgId, "d", HOUR, repo);

    const collected = await collectGarbage({ db: database.db, blobs, graceMs: 24 * HOUR });

    expect(collected.blobs).toBeGreaterThanOrEqual(2);
    expect(await blobExists(orgId, "a")).toBe(true);
    expect(await blobs.stat(referenced)).toBeDefined();
    expect(await blobExists(orgId, "b")).toBe(false);
    expect(await blobs.stat(unused)).toBeUndefined();
    expect(await blobExists(orgId, "c")).toBe(false);
    expect(await blobs.stat(orphan)).toBeUndefined();
    expect(await blobExists(orgId, "d")).toBe(true);
    expect(await blobs.stat(young)).toBeDefined();
  });

  it("keeps a blob another repository of the organization still links", async () => {
    const orgId = await database.createOrganization();
    const first = await repository(orgId);
    const second = await repository(orgId);
    await blob(orgId, "a", 48 * HOUR, first);
    await manifestReferencing(second, digest("a"));
    await database.db.insert(registryRepositoryBlobs).values({ repositoryId: second, digest: digest("a") });
    // Referenced by a manifest without a link: the re-check under the row lock keeps it.
    await blob(orgId, "b", 48 * HOUR);
    await database.db
      .insert(registryManifestReferences)
      .values({ repositoryId: second, manifestDigest: digest("e"), childDigest: digest("b"), kind: "blob" });
    await collectGarbage({ db: database.db, blobs, graceMs: 24 * HOUR });
    expect(await blobExists(orgId, "a")).toBe(true);
    expect(await blobExists(orgId, "b")).toBe(true);
  });

  it("deletes uploads idle past their expiry with their parts, keeping a part that became a blob", async () => {
    const orgId = await database.createOrganization();
    const repositoryId = await repository(orgId);
    const stale = "00000000-0000-4000-8000-000000000001";
    const live = "00000000-0000-4000-8000-000000000002";
    const parts = [];
    for (const id of [stale, live]) {
      const key = uploadPartKey(id, 0);
      const info = await blobs.put(key, new Uint8Array([1, 2, 3]), OCTETS);
      parts.push({ key, size: info.size, sha256: info.sha256 });
    }
    const old = Date.now() - 10 * 24 * HOUR;
    await database.db.insert(registryUploads).values([
      { id: stale, repositoryId, size: 3, parts: [parts[0]!], createdAt: old, updatedAt: old },
      { id: live, repositoryId, size: 3, parts: [parts[1]!] },
    ]);

    const collected = await collectGarbage({ db: database.db, blobs, uploadExpiryMs: 7 * 24 * HOUR });

    expect(collected.uploads).toBe(1);
    expect(await blobs.stat(parts[0]!.key)).toBeUndefined();
    expect(await blobs.stat(parts[1]!.key)).toBeDefined();
    const left = await database.db.select({ id: registryUploads.id }).from(registryUploads);
    expect(left.map((u) => u.id)).toContain(live);
    expect(left.map((u) => u.id)).not.toContain(stale);
  });

  it("keeps an object another organization's row still names, and deletes it with the last row", async () => {
    const owner = await database.createOrganization();
    const mounter = await database.createOrganization();
    const mounterRepo = await repository(mounter);
    const key = await blob(owner, "f", 48 * HOUR);
    await database.db
      .insert(registryBlobs)
      .values({ orgId: mounter, digest: digest("f"), size: 1, storageKey: key, createdAt: Date.now() - 48 * HOUR });
    await database.db.insert(registryRepositoryBlobs).values({ repositoryId: mounterRepo, digest: digest("f") });

    await collectGarbage({ db: database.db, blobs, graceMs: 24 * HOUR });
    expect(await blobExists(owner, "f")).toBe(false);
    expect(await blobExists(mounter, "f")).toBe(true);
    expect(await blobs.stat(key)).toBeDefined();

    await database.db.delete(registryRepositoryBlobs).where(eq(registryRepositoryBlobs.repositoryId, mounterRepo));
    await collectGarbage({ db: database.db, blobs, graceMs: 24 * HOUR });
    expect(await blobExists(mounter, "f")).toBe(false);
    expect(await blobs.stat(key)).toBeUndefined();
  });

  // Last: it moves the clock two days on, past every row and object of this file.
  it("deletes objects under registry/ that no row names once they are past the grace", async () => {
    const orgId = await database.createOrganization();
    const repositoryId = await repository(orgId);
    const upload = "00000000-0000-4000-8000-000000000003";
    const named = await blobs.put(uploadPartKey(upload, 0), new Uint8Array([1]), OCTETS);
    await database.db.insert(registryUploads).values({
      id: upload,
      repositoryId,
      size: 1,
      parts: [{ key: named.key, size: named.size, sha256: named.sha256 }],
    });
    // A chunk that lost its race, and a layer whose row never came: a crash between the two writes.
    const lostChunk = uploadPartKey(upload, 1);
    const rowless = `registry/blobs/${orgId}/sha256/${"9".repeat(64)}`;
    const beside = `artifacts/${orgId}/kept`;
    for (const key of [lostChunk, rowless, beside]) await blobs.put(key, new Uint8Array([2]), OCTETS);
    const kept = await blob(orgId, "7", 0, repositoryId);
    await manifestReferencing(repositoryId, digest("7"));

    const young = await collectGarbage({ db: database.db, blobs, graceMs: 24 * HOUR });
    expect(young.orphans).toBe(0);
    expect(await blobs.stat(rowless)).toBeDefined();

    const later = await collectGarbage({
      db: database.db,
      blobs,
      graceMs: 24 * HOUR,
      now: () => Date.now() + 48 * HOUR,
    });
    expect(later.orphans).toBeGreaterThanOrEqual(2);
    expect(await blobs.stat(lostChunk)).toBeUndefined();
    expect(await blobs.stat(rowless)).toBeUndefined();
    expect(await blobs.stat(named.key)).toBeDefined();
    expect(await blobs.stat(kept)).toBeDefined();
    expect(await blobs.stat(beside)).toBeDefined();
  });
});
