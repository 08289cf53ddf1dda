import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buffer, text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createFilesystemBlobStore } from "../../blob/filesystem-blob-store.js";
import type { BucketDirectory } from "./bucket-directory.js";
import { createMultipartUploads, type MultipartUploads } from "./multipart-uploads.js";
import { createObjectStorage } from "./object-storage.js";
import { createObjectVersions } from "./object-versions.js";
import type { ObjectChange } from "./object-changes.js";

let database: TestDatabase;
let root: string;
let directory: BucketDirectory;
let uploads: MultipartUploads;
const changes: ObjectChange[] = [];
const created: string[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  root = await mkdtemp(join(tmpdir(), "storage-"));
  const blobs = createFilesystemBlobStore(root);
  ({ directory, uploads } = createObjectStorage({ db: database.db, blobs, minPartBytes: 4 }));
  directory.onObjectChanged((change) => void changes.push(change));
  directory.onBucketCreated(({ bucket }) => void created.push(bucket));
});
afterAll(async () => {
  await database.close();
  await rm(root, { recursive: true, force: true });
});

const plain = { contentType: "text/plain", metadata: {} };
const md5 = (value: string | Buffer) => createHash("md5").update(value).digest("hex");
async function* of(...chunks: string[]) {
  for (const chunk of chunks) yield Buffer.from(chunk);
}
const blobFiles = async () =>
  (await readdir(join(root, "objects"), { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).length;
const read = async (orgId: string, bucket: string, key: string) => {
  const object = await directory.readObject(orgId, bucket, key);
  return object && text(object.blob.read());
};

describe(`bucket directory (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("keeps buckets per organization, with S3's name rules", async () => {
    const [a, b] = [await database.createOrganization(), await database.createOrganization()];
    await directory.createBucket(a, "photos");
    await directory.createBucket(b, "photos");
    expect(created).toEqual(["photos", "photos"]);
    await expect(directory.createBucket(a, "photos")).rejects.toMatchObject({ code: "BucketAlreadyOwnedByYou" });
    expect((await directory.ensureBucket(a, "photos")).orgId).toBe(a);
    expect(created).toHaveLength(2);
    for (const bad of ["ab", "Photos", "a_b", "-ab", "a..b", "192.168.0.1", "xn--abc", "healthz", "x".repeat(64)])
      await expect(directory.createBucket(a, bad)).rejects.toMatchObject({
        code: "InvalidBucketName",
        message: expect.stringContaining("bucket:"),
      });
    await directory.putObject(a, "photos", "one", of("1"), plain);
    await expect(directory.readObject(b, "photos", "one")).resolves.toBeUndefined();
    await expect(directory.deleteBucket(a, "photos")).rejects.toMatchObject({ code: "BucketNotEmpty" });
    await directory.deleteObject(a, "photos", "one");
    await directory.deleteBucket(a, "photos");
    await expect(
      directory.listObjects(a, "photos", { prefix: "", delimiter: "", after: "", maxKeys: 10 }),
    ).rejects.toMatchObject({ code: "NoSuchBucket" });
    expect((await directory.listBuckets(b)).map((x) => x.name)).toEqual(["photos"]);
  });

  it("replaces an object's content, deletes the old blob, and tells listeners after commit", async () => {
    const org = await database.createOrganization();
    await directory.createBucket(org, "docs");
    const before = await blobFiles();
    changes.length = 0;
    const first = await directory.putObject(org, "docs", "a/b.txt", of("hello, ", "world"), {
      contentType: "text/plain",
      metadata: { owner: "me" },
    });
    expect(first).toMatchObject({ size: 12, etag: md5("hello, world"), metadata: { owner: "me" } });
    await directory.putObject(org, "docs", "a/b.txt", of("second"), plain);
    expect(await read(org, "docs", "a/b.txt")).toBe("second");
    expect(await blobFiles()).toBe(before + 1);
    await directory.deleteObject(org, "docs", "a/b.txt");
    expect(await blobFiles()).toBe(before);
    expect(changes.map((c) => [c.kind, c.key, c.etag, c.size])).toEqual([
      ["put", "a/b.txt", md5("hello, world"), 12],
      ["put", "a/b.txt", md5("second"), 6],
      ["delete", "a/b.txt", md5("second"), 6],
    ]);
  });

  it("keeps the old version when a new upload fails midway", async () => {
    const org = await database.createOrganization();
    await directory.createBucket(org, "docs");
    await directory.putObject(org, "docs", "k", of("old"), plain);
    const before = await blobFiles();
    async function* failing() {
      yield Buffer.from("new");
      throw new Error("connection reset");
    }
    await expect(directory.putObject(org, "docs", "k", failing(), plain)).rejects.toThrow("connection reset");
    expect(await read(org, "docs", "k")).toBe("old");
    expect(await blobFiles()).toBe(before);
  });

  it("lists by prefix and delimiter in byte order, across pages", async () => {
    const org = await database.createOrganization();
    await directory.createBucket(org, "tree");
    const keys = ["a/1", "a/2", "b", "c/x/1", "c/y", "d", "Z", "é"];
    for (const key of keys) await directory.putObject(org, "tree", key, of(key), plain);
    const list = (prefix: string, delimiter: string, after = "", maxKeys = 1000) =>
      directory.listObjects(org, "tree", { prefix, delimiter, after, maxKeys });
    const flat = await list("", "");
    expect(flat.objects.map((o) => o.key)).toEqual(["Z", "a/1", "a/2", "b", "c/x/1", "c/y", "d", "é"]);
    const grouped = await list("", "/");
    expect(grouped.objects.map((o) => o.key)).toEqual(["Z", "b", "d", "é"]);
    expect(grouped.commonPrefixes).toEqual(["a/", "c/"]);
    const inner = await list("c/", "/");
    expect([inner.objects.map((o) => o.key), inner.commonPrefixes]).toEqual([["c/y"], ["c/x/"]]);

    // Pages of two, each starting after the previous page's last entry, give the same listing.
    const seen: string[] = [];
    let after = "";
    for (let page = 0; page < 10; page++) {
      const result = await list("", "/", after, 2);
      seen.push(...result.objects.map((o) => o.key), ...result.commonPrefixes);
      if (!result.isTruncated) break;
      after = result.next;
    }
    expect(seen.sort()).toEqual(["Z", "a/", "b", "c/", "d", "é"]);
  });

  it("assembles a multipart upload with S3's etag, and checks order, etags and sizes", async () => {
    const org = await database.createOrganization();
    await directory.createBucket(org, "big");
    const { uploadId } = await uploads.create(org, "big", "file", { contentType: "application/x-test", metadata: {} });
    const p1 = await uploads.uploadPart(org, "big", "file", uploadId, 1, of("aaaa", "a"));
    const p2 = await uploads.uploadPart(org, "big", "file", uploadId, 2, of("bb"));
    const p3 = await uploads.uploadPart(org, "big", "file", uploadId, 3, of("c"));
    expect((await uploads.listParts(org, "big", "file", uploadId, { after: 0, maxParts: 2 })).isTruncated).toBe(true);
    await expect(
      uploads.complete(org, "big", "file", uploadId, [
        { partNumber: 2, etag: p2.etag },
        { partNumber: 1, etag: p1.etag },
      ]),
    ).rejects.toMatchObject({ code: "InvalidPartOrder" });
    await expect(
      uploads.complete(org, "big", "file", uploadId, [{ partNumber: 1, etag: md5("x") }]),
    ).rejects.toMatchObject({
      code: "InvalidPart",
    });
    await expect(
      uploads.complete(org, "big", "file", uploadId, [
        { partNumber: 2, etag: p2.etag },
        { partNumber: 3, etag: p3.etag },
      ]),
    ).rejects.toMatchObject({ code: "EntityTooSmall" });
    const done = await uploads.complete(org, "big", "file", uploadId, [
      { partNumber: 1, etag: `"${p1.etag}"` },
      { partNumber: 3, etag: p3.etag },
    ]);
    const expected = md5(Buffer.concat([Buffer.from(md5("aaaaa"), "hex"), Buffer.from(md5("c"), "hex")]));
    expect(done).toMatchObject({ etag: `${expected}-2`, size: 6, contentType: "application/x-test" });
    const object = await directory.readObject(org, "big", "file");
    expect((await buffer(object!.blob.read())).toString()).toBe("aaaaac");
    await expect(uploads.abort(org, "big", "file", uploadId)).rejects.toMatchObject({ code: "NoSuchUpload" });
    await expect(uploads.abort(org, "big", "file", "not-a-uuid")).rejects.toMatchObject({ code: "NoSuchUpload" });
  });

  it("refuses an upload begun while its bucket is being deleted with NoSuchBucket", async () => {
    const org = await database.createOrganization();
    await directory.createBucket(org, "going");
    // The bucket goes between the upload's lookup of it and its insert.
    const racing: BucketDirectory = Object.create(directory, {
      requireBucket: {
        value: async (orgId: string, name: string) => {
          const bucket = await directory.requireBucket(orgId, name);
          await directory.deleteBucket(orgId, name);
          return bucket;
        },
      },
    });
    const versions = createObjectVersions({ db: database.db, blobs: createFilesystemBlobStore(root) });
    const raced = createMultipartUploads({
      db: database.db,
      blobs: createFilesystemBlobStore(root),
      directory: racing,
      versions,
    });
    await expect(raced.create(org, "going", "file", plain)).rejects.toMatchObject({ code: "NoSuchBucket" });
  });
});
