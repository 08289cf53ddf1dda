import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { text } from "node:stream/consumers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobKeyError } from "./blob-key.js";
import type { BlobStore } from "./blob-store.js";
import { createFilesystemBlobStore } from "./filesystem-blob-store.js";

let root: string;
let store: BlobStore;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "blob-store-"));
  store = createFilesystemBlobStore(join(root, "blobs"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const bytes = (value: string) => new TextEncoder().encode(value);
const sha256 = (value: string | Uint8Array) => createHash("sha256").update(value).digest("hex");

async function readAll(key: string, range?: { start: number; end: number }): Promise<string> {
  const blob = await store.open(key);
  if (!blob) throw new Error(`${key} is missing`);
  return text(blob.read(range));
}

/** Every file under the store's root, relative to the test's folder. */
async function files(): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)));
}

describe("the filesystem blob store", () => {
  it("writes a streamed source, and leaves nothing when the source fails", async () => {
    async function* chunks() {
      for (let i = 0; i < 100; i++) yield bytes(`chunk ${i};`);
    }
    const expected = Array.from({ length: 100 }, (_, i) => `chunk ${i};`).join("");
    const info = await store.write("streamed/one", chunks(), { contentType: "text/plain" });
    expect(info).toMatchObject({ size: expected.length, sha256: sha256(expected), contentType: "text/plain" });
    expect(await readAll("streamed/one")).toBe(expected);
    expect(await readAll("streamed/one", { start: 6, end: 13 })).toBe("0;chunk ");

    async function* failing() {
      yield bytes("partial");
      throw new Error("client went away");
    }
    await expect(store.write("streamed/two", failing(), { contentType: "text/plain" })).rejects.toThrow("went away");
    expect(await store.stat("streamed/two")).toBeUndefined();
    expect((await files()).filter((f) => f.includes("/tmp/"))).toEqual([]);
  });

  it("stores bytes with their type and hash, and reads them whole or by range", async () => {
    const before = Date.now();
    const info = await store.put("threads/t1/artifacts/report.txt", bytes("hello, world"), {
      contentType: "text/plain; charset=utf-8",
    });
    expect(info).toMatchObject({
      key: "threads/t1/artifacts/report.txt",
      size: 12,
      contentType: "text/plain; charset=utf-8",
      sha256: sha256("hello, world"),
    });
    expect(info.updatedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(await store.stat("threads/t1/artifacts/report.txt")).toEqual(info);
    expect(await readAll("threads/t1/artifacts/report.txt")).toBe("hello, world");
    expect(await readAll("threads/t1/artifacts/report.txt", { start: 7, end: 11 })).toBe("world");
    expect(await readAll("threads/t1/artifacts/report.txt", { start: 0, end: 0 })).toBe("h");
  });

  it("keeps binary content byte-exact, and empty content too", async () => {
    const binary = new Uint8Array(70_000).map((_, i) => (i * 31) % 256);
    await store.put("bin/data.bin", binary, { contentType: "application/octet-stream" });
    const blob = await store.open("bin/data.bin");
    const chunks: Buffer[] = [];
    for await (const chunk of blob!.read()) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(Buffer.from(binary))).toBe(true);
    expect(blob!.sha256).toBe(sha256(binary));

    await store.put("bin/empty", new Uint8Array(0), { contentType: "application/octet-stream" });
    expect(await store.stat("bin/empty")).toMatchObject({ size: 0, sha256: sha256("") });
    expect(await readAll("bin/empty")).toBe("");
  });

  it("replaces an object at once, while a reader that opened the old version keeps reading it", async () => {
    await store.put("swap/file", bytes("old version"), { contentType: "text/plain" });
    const old = await store.open("swap/file");
    await store.put("swap/file", bytes("the new one"), { contentType: "text/markdown" });
    expect(old).toMatchObject({ size: 11, contentType: "text/plain", sha256: sha256("old version") });
    expect(await text(old!.read())).toBe("old version");
    expect(await store.stat("swap/file")).toMatchObject({
      contentType: "text/markdown",
      sha256: sha256("the new one"),
    });
  });

  it("ends concurrent writes of one key with one whole version and no temporary file left", async () => {
    const versions = Array.from({ length: 12 }, (_, i) => `version ${i} `.repeat(1000 + i));
    await Promise.all(versions.map((v) => store.put("race/key", bytes(v), { contentType: "text/plain" })));
    const content = await readAll("race/key");
    expect(versions).toContain(content);
    expect((await store.stat("race/key"))?.sha256).toBe(sha256(content));
    expect((await files()).filter((f) => f.includes("/tmp/"))).toEqual([]);
  });

  it("lets an object and a folder of the same name exist, whatever the segments hold", async () => {
    const keys = ["same", "same/inner", "same%blob", "per%cent/x%25y", "ünïcødé/名前.txt", "spaces in/a name"];
    for (const key of keys) await store.put(`names/${key}`, bytes(key), { contentType: "text/plain" });
    for (const key of keys) expect(await readAll(`names/${key}`)).toBe(key);
    // Everything stays under the store's root.
    const stored = await files();
    expect(stored.filter((f) => f.startsWith("blobs/objects/")).length).toBeGreaterThanOrEqual(keys.length);
    expect(stored.filter((f) => !f.startsWith("blobs/objects/") && !f.startsWith("blobs/tmp/"))).toEqual([]);
  });

  it("refuses keys that could escape the root, segments the filesystem cannot hold, and bad content types", async () => {
    for (const key of [
      "",
      "/abs",
      "a/../b",
      "..",
      "a/./b",
      "a//b",
      "trail/",
      "back\\slash",
      "ctl\u0001",
      "x".repeat(1025),
    ]) {
      await expect(store.put(key, bytes("x"), { contentType: "text/plain" }), key).rejects.toBeInstanceOf(BlobKeyError);
      await expect(store.open(key), key).rejects.toBeInstanceOf(BlobKeyError);
    }
    await expect(store.put(`long/${"n".repeat(251)}`, bytes("x"), { contentType: "text/plain" })).rejects.toThrow(
      /segment longer than the filesystem allows/,
    );
    for (const contentType of ["", "text", "text/html\r\nx-evil: 1", "tëxt/plain", "a/b c"]) {
      await expect(store.put("ok/key", bytes("x"), { contentType }), contentType).rejects.toBeInstanceOf(BlobKeyError);
    }
    await expect(
      store.put("ok/key", bytes("x"), { contentType: 'text/csv; charset=utf-8; header="present"' }),
    ).resolves.toBeDefined();
  });

  it("answers undefined for a missing object, and deletes one object or a folder", async () => {
    expect(await store.open("missing/key")).toBeUndefined();
    expect(await store.stat("missing/key")).toBeUndefined();
    for (const key of ["del/a/one", "del/a/two/deep", "del/a", "del/ab/three", "del/keep"])
      await store.put(key, bytes(key), { contentType: "text/plain" });
    expect(await store.delete("del/keep")).toBe(true);
    expect(await store.delete("del/keep")).toBe(false);
    await store.deletePrefix("del/a/");
    expect(await store.stat("del/a/one")).toBeUndefined();
    expect(await store.stat("del/a/two/deep")).toBeUndefined();
    // Only keys under the folder `del/a/`: the object `del/a` and the folder `del/ab/` stay.
    expect(await readAll("del/a")).toBe("del/a");
    expect(await readAll("del/ab/three")).toBe("del/ab/three");
    await store.deletePrefix("del/never/");
    await expect(store.deletePrefix("del/a")).rejects.toThrow(/must end with \//);
    await expect(store.deletePrefix("../")).rejects.toBeInstanceOf(BlobKeyError);
  });
});
