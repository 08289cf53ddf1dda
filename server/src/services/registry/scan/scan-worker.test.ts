import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import type { Logger } from "../../../log/logger.js";
import { registryBlobs, registryManifests, registryRepositories, registryScans } from "../registry-schema.js";
import { alpineImage, buildImage, debianImage, TEST_FEED_DIR, type TestImage } from "./scan-test-images.js";
import { createScanWorker, type ScanWorkerOptions } from "./scan-worker.js";

let database: TestDatabase;
let blobs: BlobStore;
let blobDir: string;
const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";
const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  database = await openTestDatabase();
  blobDir = await mkdtemp(join(tmpdir(), "scan-worker-"));
  blobs = createFilesystemBlobStore(blobDir);
});
afterAll(async () => {
  await database?.close();
  await rm(blobDir, { recursive: true, force: true });
});

/** Pushes `image` into a new repository of `orgId` as the OCI plane would leave it; answers its digest. */
async function push(orgId: string, image: TestImage, mediaType = "application/vnd.oci.image.manifest.v1+json") {
  const { db } = database;
  const [repo] = await db
    .insert(registryRepositories)
    .values({ orgId, name: `app-${Math.random().toString(36).slice(2)}` })
    .returning();
  for (const [digest, bytes] of image.blobs) {
    const key = `registry/blobs/${orgId}/${digest.replace(":", "/")}`;
    await blobs.put(key, bytes, { contentType: "application/octet-stream" });
    await db.insert(registryBlobs).values({ orgId, digest, size: bytes.length, storageKey: key }).onConflictDoNothing();
  }
  const { digestOf } = await import("./scan-test-images.js");
  const digest = digestOf(image.manifest);
  await db.insert(registryManifests).values({
    repositoryId: repo!.id,
    digest,
    mediaType,
    content: image.manifest,
    totalSize: image.manifest.length,
  });
  return digest;
}

async function scanRow(orgId: string, digest: string) {
  const [row] = await database.db
    .select()
    .from(registryScans)
    .where(and(eq(registryScans.orgId, orgId), eq(registryScans.manifestDigest, digest)));
  return row;
}

function worker(options: Partial<ScanWorkerOptions> = {}) {
  return createScanWorker({ db: database.db, blobs, logger: quiet, advisoryDir: TEST_FEED_DIR, ...options });
}

describe(`scan worker (${engine})`, () => {
  it("scans a pushed Debian image once and stores its report, worst first", async () => {
    const orgId = await database.createOrganization();
    const digest = await push(orgId, debianImage());
    const scanner = worker({ concurrency: 8 });
    expect(await scanner.runOnce()).toBeGreaterThanOrEqual(1);
    const row = await scanRow(orgId, digest);
    expect(row).toMatchObject({ status: "Success", severity: "Critical", total: 5, fixable: 3, errorMessage: null });
    expect(row!.feedVersion).toMatch(/^[0-9a-f]{64}$/);
    const report = row!.report as { id: string; package: string; fix_version: string }[];
    expect(report.map((v) => [v.id, v.package, v.fix_version])).toEqual([
      ["TEST-DEB-0001", "libssl3", "3.0.15-1~deb12u1"],
      ["TEST-DEB-0004", "libc-bin", "2.36-9+deb12u4"],
      ["TEST-DEB-0004", "libc6", "2.36-9+deb12u4"],
      ["TEST-DEB-0005", "libpcre2-8-0", ""],
      ["TEST-DEB-0002", "zlib1g", ""],
    ]);
    // Scanned once: a second pass finds nothing left to do.
    expect(await scanner.runOnce()).toBe(0);
  });

  it("scans an Alpine image, honours a whiteout that removes a database, and skips indexes", async () => {
    const orgId = await database.createOrganization();
    const alpine = await push(orgId, alpineImage());
    const removed = await push(orgId, debianImage([[{ path: "var/lib/dpkg/.wh.status", content: "" }]]));
    const index = await push(orgId, buildImage([]), "application/vnd.oci.image.index.v1+json");
    const scanner = worker({ concurrency: 8 });
    while ((await scanner.runOnce()) > 0);
    const row = await scanRow(orgId, alpine);
    expect(row).toMatchObject({ status: "Success", severity: "Medium", total: 3, fixable: 2 });
    expect((row!.report as { package: string; severity: string }[]).map((v) => [v.package, v.severity])).toEqual([
      ["libcrypto3", "Medium"],
      ["libssl3", "Medium"],
      ["busybox", "Unknown"],
    ]);
    expect(await scanRow(orgId, removed)).toMatchObject({
      status: "Unsupported",
      errorMessage: "the image has no dpkg package database",
      total: null,
    });
    expect(await scanRow(orgId, index)).toBeUndefined();
  });

  it("answers NoFeed without a feed, then scans again once a feed is loaded", async () => {
    const orgId = await database.createOrganization();
    const digest = await push(orgId, debianImage());
    while ((await worker({ advisoryDir: undefined, concurrency: 8 }).runOnce()) > 0);
    expect(await scanRow(orgId, digest)).toMatchObject({
      status: "NoFeed",
      severity: null,
      report: null,
      feedVersion: null,
    });
    while ((await worker({ concurrency: 8 }).runOnce()) > 0);
    expect(await scanRow(orgId, digest)).toMatchObject({ status: "Success", total: 5 });
  });

  it("claims each image once across workers sharing the database", async () => {
    const orgId = await database.createOrganization();
    const digests = await Promise.all([push(orgId, alpineImage()), push(orgId, debianImage())]);
    const scanners = [worker(), worker(), worker()];
    let scanned = 0;
    for (;;) {
      const counts = await Promise.all(scanners.map((s) => s.runOnce()));
      if (counts.every((c) => c === 0)) break;
      scanned += counts.reduce((a, b) => a + b, 0);
    }
    // Earlier tests' images are done; these two are scanned by exactly one worker each.
    expect(scanned).toBe(2);
    for (const digest of digests) expect(await scanRow(orgId, digest)).toMatchObject({ status: "Success" });
  });

  it("records an Error without internal detail when a layer is missing from storage", async () => {
    const orgId = await database.createOrganization();
    const image = debianImage();
    const digest = await push(orgId, image);
    await database.db
      .delete(registryBlobs)
      .where(and(eq(registryBlobs.orgId, orgId), eq(registryBlobs.digest, image.layerDigests[0]!)));
    while ((await worker({ concurrency: 8 }).runOnce()) > 0);
    expect(await scanRow(orgId, digest)).toMatchObject({
      status: "Error",
      errorMessage: `the layer ${image.layerDigests[0]} is not stored`,
    });
  });

  it("takes over a Running scan left by a dead process, never a live one", async () => {
    const orgId = await database.createOrganization();
    const [dead, live] = await Promise.all([push(orgId, alpineImage()), push(orgId, debianImage())]);
    const now = Date.now();
    await database.db.insert(registryScans).values([
      { orgId, manifestDigest: dead, status: "Running", updatedAt: now - 20 * 60_000 },
      { orgId, manifestDigest: live, status: "Running", updatedAt: now - 1_000 },
    ]);
    while ((await worker({ concurrency: 8 }).runOnce()) > 0);
    expect(await scanRow(orgId, dead)).toMatchObject({ status: "Success" });
    expect(await scanRow(orgId, live)).toMatchObject({ status: "Running", updatedAt: now - 1_000 });
    // Settle the live claim, or the next test's short staleness would see it as abandoned.
    await database.db
      .update(registryScans)
      .set({ status: "Unsupported" })
      .where(and(eq(registryScans.orgId, orgId), eq(registryScans.manifestDigest, live)));
  });

  it("renews the claim of a long scan so no other process takes it over, and records its result", async () => {
    const orgId = await database.createOrganization();
    const digest = await push(orgId, debianImage());
    // Storage slow enough (three blobs, 1.5 s each) that a 3-second claim would go stale mid-scan.
    const slow: BlobStore = {
      ...blobs,
      open: async (key) => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return blobs.open(key);
      },
    };
    const first = worker({ blobs: slow, staleMs: 3_000, concurrency: 8 }).runOnce();
    await new Promise((resolve) => setTimeout(resolve, 3_600));
    expect(await worker({ staleMs: 3_000, concurrency: 8 }).runOnce()).toBe(0);
    expect(await first).toBe(1);
    expect(await scanRow(orgId, digest)).toMatchObject({ status: "Success", total: 5 });
  });
});
