import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { text } from "node:stream/consumers";
import { ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server, type S3Server } from "../../../test/start-s3-server.js";
import { BlobKeyError } from "./blob-key.js";
import type { BlobStore } from "./blob-store.js";
import { createFilesystemBlobStore } from "./filesystem-blob-store.js";
import { createS3BlobStore } from "./s3-blob-store.js";

const MiB = 1024 * 1024;
const bytes = (value: string) => new TextEncoder().encode(value);
const sha256 = (value: string | Uint8Array) => createHash("sha256").update(value).digest("hex");

let folder: string;
let s3: S3Server;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "blob-contract-"));
  s3 = await startS3Server();
  await s3.createBucket("contract");
});
afterAll(async () => {
  await s3.stop();
  await rm(folder, { recursive: true, force: true });
});

/** Keys of every object in the S3 bucket, staging ones included (s3rver cannot list multipart uploads). */
async function bucketLeftovers(): Promise<string[]> {
  const objects = await s3.client.send(new ListObjectsV2Command({ Bucket: "contract" }));
  return (objects.Contents ?? []).map((o) => o.Key ?? "");
}

/** Live memory only: garbage is collected before each sample. */
const collectGarbage = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();
const liveBytes = () => {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

const drivers: [string, () => BlobStore][] = [
  ["filesystem", () => createFilesystemBlobStore(join(folder, "blobs"))],
  ["s3", () => createS3BlobStore({ client: s3.client, bucket: "contract", prefix: "tenant/", partBytes: 5 * MiB })],
];

describe.each(drivers)("the %s blob store", (driver, create) => {
  let store: BlobStore;
  beforeAll(() => {
    store = create();
  });
  const base = `${driver}-case`;

  async function readAll(key: string, range?: { start: number; end: number }): Promise<string> {
    const blob = await store.open(key);
    if (!blob) throw new Error(`${key} is missing`);
    return text(blob.read(range));
  }

  it("puts, stats, opens whole or by range, and deletes", async () => {
    const key = `${base}/put/report.txt`;
    const info = await store.put(key, bytes("hello, world"), { contentType: "text/plain; charset=utf-8" });
    expect(info).toMatchObject({
      key,
      size: 12,
      contentType: "text/plain; charset=utf-8",
      sha256: sha256("hello, world"),
    });
    expect(await store.stat(key)).toEqual(info);
    expect(await readAll(key)).toBe("hello, world");
    expect(await readAll(key, { start: 7, end: 11 })).toBe("world");
    expect(await readAll(key, { start: 1, end: 1 })).toBe("e");
    const opened = await store.open(key);
    expect(opened).toMatchObject({ size: 12, sha256: sha256("hello, world") });
    await opened!.close();

    await store.put(`${base}/put/empty`, new Uint8Array(), { contentType: "application/octet-stream" });
    expect(await store.stat(`${base}/put/empty`)).toMatchObject({ size: 0, sha256: sha256("") });
    expect(await readAll(`${base}/put/empty`)).toBe("");

    expect(await store.delete(key)).toBe(true);
    expect(await store.delete(key)).toBe(false);
    expect(await store.stat(key)).toBeUndefined();
    expect(await store.open(key)).toBeUndefined();
  });

  it("refuses bad keys and content types", async () => {
    await expect(store.put("../escape", bytes("x"), { contentType: "text/plain" })).rejects.toThrow(BlobKeyError);
    await expect(store.stat("a//b")).rejects.toThrow(BlobKeyError);
    await expect(store.put(`${base}/x`, bytes("x"), { contentType: "text/plain\r\nX: y" })).rejects.toThrow(
      BlobKeyError,
    );
    if (driver === "s3") {
      await expect(store.put(".uploads/x", bytes("x"), { contentType: "text/plain" })).rejects.toThrow(BlobKeyError);
    }
    await expect(store.deletePrefix("no-slash")).rejects.toThrow(BlobKeyError);
  });

  it("deletes a prefix and nothing beside it", async () => {
    for (let i = 0; i < 5; i++)
      await store.put(`${base}/threads/t1/a/${i}`, bytes(`${i}`), { contentType: "text/plain" });
    await store.put(`${base}/threads/t1-other/keep`, bytes("keep"), { contentType: "text/plain" });
    await store.put(`${base}/threads/t1`, bytes("file named like the folder"), { contentType: "text/plain" });
    await store.deletePrefix(`${base}/threads/t1/`);
    expect(await store.stat(`${base}/threads/t1/a/3`)).toBeUndefined();
    expect(await readAll(`${base}/threads/t1-other/keep`)).toBe("keep");
    expect(await readAll(`${base}/threads/t1`)).toBe("file named like the folder");
    await store.deletePrefix(`${base}/nothing/here/`);
  });

  it("lists the objects under a prefix with when each was written, and nothing beside them", async () => {
    const before = Date.now() - 2000;
    const keys = [`${base}/list/a/1`, `${base}/list/a/b/2`, `${base}/list/100%25/x%blob`, `${base}/list/a`];
    for (const key of keys) await store.put(key, bytes(key), { contentType: "text/plain" });
    await store.put(`${base}/list-other/3`, bytes("beside"), { contentType: "text/plain" });
    const listed = [];
    for await (const object of store.list(`${base}/list/`)) listed.push(object);
    expect(listed.map((object) => object.key).sort()).toEqual([...keys].sort());
    for (const object of listed) {
      expect(object.updatedAt).toBeGreaterThan(before);
      expect(object.updatedAt).toBeLessThanOrEqual(Date.now() + 2000);
    }
    expect(await store.stat(listed[0]!.key)).toBeDefined();
    const nothing = [];
    for await (const object of store.list(`${base}/nothing/`)) nothing.push(object);
    expect(nothing).toEqual([]);
    await expect(async () => {
      for await (const _ of store.list("no-slash")) break;
    }).rejects.toThrow(BlobKeyError);
  });

  it("sweeps what an abandoned write left behind once it is old enough, and nothing else", async () => {
    await store.put(`${base}/sweep/kept`, bytes("kept"), { contentType: "text/plain" });
    // What a process stopped mid-write leaves: a temporary file, or a staging object.
    const leftover = async () => {
      if (driver === "filesystem") {
        await mkdir(join(folder, "blobs", "tmp"), { recursive: true });
        await writeFile(join(folder, "blobs", "tmp", "abandoned.tmp"), "partial");
      } else {
        await s3.client.send(
          new PutObjectCommand({ Bucket: "contract", Key: "tenant/.uploads/abandoned", Body: "partial" }),
        );
      }
    };
    const leftoverExists = async () =>
      driver === "filesystem"
        ? (await readdir(join(folder, "blobs", "tmp"))).includes("abandoned.tmp")
        : (await bucketLeftovers()).includes("tenant/.uploads/abandoned");
    await leftover();
    expect(await store.sweepAbandonedWrites(Date.now() - 60_000)).toBe(0);
    expect(await leftoverExists()).toBe(true);
    expect(await store.sweepAbandonedWrites(Date.now() + 60_000)).toBe(1);
    expect(await leftoverExists()).toBe(false);
    expect(await readAll(`${base}/sweep/kept`)).toBe("kept");
  });

  it("keeps every byte in order when a write arrives in many small chunks of uneven sizes", async () => {
    // Drivers gather chunks into larger writes and parts: the seams must not lose or move a byte.
    const chunks = Array.from({ length: 3000 }, (_, i) => randomBytes(1 + ((i * 7919) % 1400)));
    const whole = Buffer.concat(chunks);
    const info = await store.write(`${base}/uneven`, chunks, { contentType: "application/octet-stream" });
    expect(info).toMatchObject({ size: whole.length, sha256: createHash("sha256").update(whole).digest("hex") });
    const blob = await store.open(`${base}/uneven`);
    const read: Buffer[] = [];
    for await (const chunk of blob!.read()) read.push(chunk as Buffer);
    expect(Buffer.concat(read).equals(whole)).toBe(true);
  });

  it("leaves nothing when the source fails, small or multipart", async () => {
    async function* failing(size: number) {
      for (let sent = 0; sent < size; sent += MiB) yield randomBytes(MiB);
      throw new Error("client went away");
    }
    const options = { contentType: "application/octet-stream" };
    await expect(store.write(`${base}/failed/small`, failing(MiB), options)).rejects.toThrow("went away");
    await expect(store.write(`${base}/failed/large`, failing(12 * MiB), options)).rejects.toThrow("went away");
    expect(await store.stat(`${base}/failed/small`)).toBeUndefined();
    expect(await store.stat(`${base}/failed/large`)).toBeUndefined();
    if (driver === "s3")
      expect((await bucketLeftovers()).filter((k) => k.includes("failed/") || k.includes(".uploads/"))).toEqual([]);
  });

  it("keeps reading the version it opened, or fails, when the object is replaced", async () => {
    const key = `${base}/replaced`;
    await store.put(key, bytes("first version"), { contentType: "text/plain" });
    const opened = await store.open(key);
    await store.put(key, bytes("second, longer version"), { contentType: "text/plain" });
    expect(opened).toMatchObject({ size: 13, sha256: sha256("first version") });
    // Either the old bytes (filesystem: the open file) or an error (S3: If-Match), never the new ones.
    const read = text(opened!.read()).then(
      (content) => ({ content }),
      (error: Error) => ({ error: error.message }),
    );
    expect(await read).toEqual(
      driver === "s3" ? { error: expect.stringContaining("replaced") } : { content: "first version" },
    );
    expect(await readAll(key)).toBe("second, longer version");
  });

  it("sends whole objects and ranges to HTTP responses, many at once, each byte right", async () => {
    const contents = [3 * MiB + 17, 2 * MiB, 5].map((size) => randomBytes(size));
    for (const [i, content] of contents.entries()) {
      await store.put(`${base}/send/${i}`, content, { contentType: "application/octet-stream" });
    }
    const server = createServer((request, response) => {
      const [, index, start, end] = /^\/(\d+)(?:\/(\d+)-(\d+))?$/.exec(request.url!)!;
      void store
        .open(`${base}/send/${index}`)
        .then((blob) =>
          blob!.sendTo(response, start === undefined ? undefined : { start: Number(start), end: Number(end) }),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const expected: [string, Buffer][] = [];
      for (let round = 0; round < 3; round++) {
        for (const [i, content] of contents.entries()) {
          expected.push([`/${i}`, content]);
          const start = Math.floor(content.length / 3);
          expected.push([`/${i}/${start}-${content.length - 2}`, content.subarray(start, content.length - 1)]);
        }
      }
      const bodies = await Promise.all(
        expected.map(async ([path]) => Buffer.from(await (await fetch(`${url}${path}`)).arrayBuffer())),
      );
      for (const [i, body] of bodies.entries()) expect(sha256(body)).toBe(sha256(expected[i]![1]));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("stops sending, and says so, when the client goes away", { timeout: 60_000 }, async () => {
    // Larger than the most the kernel can buffer on loopback (receive and send buffers at their maximum).
    await store.put(`${base}/send/large`, randomBytes(64 * MiB), { contentType: "application/octet-stream" });
    let sent: Promise<void> | undefined;
    const server = createServer((_request, response) => {
      sent = store.open(`${base}/send/large`).then((blob) => blob!.sendTo(response));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
      socket.write("GET / HTTP/1.1\r\nhost: x\r\n\r\n");
      // Read a little, then hang up with most of the body unsent.
      await new Promise((resolve) => socket.once("data", resolve));
      socket.destroy();
      await expect(sent).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // The S3 server runs in this process too, so its buffers count: the bound is loose but well
  // below the object's size, which a store that held the object whole would exceed.
  it("streams a 64 MiB write in parts without holding it in memory", { timeout: 120_000 }, async () => {
    const block = randomBytes(MiB);
    const hash = createHash("sha256");
    async function* source() {
      for (let i = 0; i < 64; i++) {
        const chunk = Buffer.from(block);
        chunk.writeUInt32BE(i, 0);
        hash.update(chunk);
        yield chunk;
      }
    }
    const before = liveBytes();
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, liveBytes() - before);
    }, 250);
    const info = await store.write(`${base}/large`, source(), { contentType: "application/octet-stream" });
    clearInterval(sampler);
    expect(info).toMatchObject({ size: 64 * MiB, sha256: hash.digest("hex") });
    expect(await store.stat(`${base}/large`)).toMatchObject({ size: 64 * MiB, sha256: info.sha256 });
    const tail = await store.open(`${base}/large`);
    const last = Buffer.from(
      await new Response(tail!.read({ start: 63 * MiB, end: 63 * MiB + 3 }) as unknown as ReadableStream).arrayBuffer(),
    );
    expect(last.readUInt32BE(0)).toBe(63);
    expect(peak).toBeLessThan(40 * MiB);
  });
});
