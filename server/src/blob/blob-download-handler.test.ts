import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBlobDownloadHandler } from "./blob-download-handler.js";
import type { BlobStore } from "./blob-store.js";
import { createBlobUrlSigner, DOWNLOAD_LINK_TTL_MS } from "./blob-url-signer.js";
import { createFilesystemBlobStore } from "./filesystem-blob-store.js";

let root: string;
let store: BlobStore;
let server: http.Server;
let h2server: http2.Http2Server;
let base = "";
let h2base = "";
const clock = { ms: Date.now() };
const errors: unknown[] = [];
const signingKey = new Uint8Array(randomBytes(32));
const signer = createBlobUrlSigner({ signingKey, baseUrl: () => base, now: () => clock.ms });
const binary = new Uint8Array(100_000).map((_, i) => (i * 7 + 3) % 256);
let sha = "";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "blob-download-"));
  store = createFilesystemBlobStore(root);
  sha = (await store.put("threads/t1/artifacts/out/data.bin", binary, { contentType: "application/octet-stream" }))
    .sha256;
  await store.put("threads/t1/artifacts/notes.txt", new TextEncoder().encode("0123456789"), {
    contentType: "text/plain; charset=utf-8",
  });
  const handler = createBlobDownloadHandler({
    store,
    signer,
    now: () => clock.ms,
    onError: (error) => errors.push(error),
    next: (_request, response) => {
      response.statusCode = 418;
      response.end("router");
    },
  });
  server = http.createServer(handler);
  h2server = http2.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => h2server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h2base = `http://127.0.0.1:${(h2server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => h2server.close(resolve));
  await rm(root, { recursive: true, force: true });
  expect(errors).toEqual([]);
});

async function get(url: string, headers: Record<string, string> = {}, method: "GET" | "HEAD" | "POST" = "GET") {
  const response = await request(url, { method, headers });
  const body = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, body };
}

describe("the download handler", () => {
  it("serves a signed link byte-exact with type, length, ETag, disposition and a private cache lifetime", async () => {
    clock.ms = Date.now();
    const url = signer.sign("threads/t1/artifacts/out/data.bin", {
      contentType: "application/x-custom",
      fileName: "data.bin",
    });
    clock.ms += 60_000;
    const { status, headers, body } = await get(url);
    expect(status).toBe(200);
    expect(body.equals(Buffer.from(binary))).toBe(true);
    expect(headers).toMatchObject({
      "content-type": "application/x-custom",
      "content-length": String(binary.length),
      etag: `"${sha}"`,
      "content-disposition": 'attachment; filename="data.bin"',
      "cache-control": `private, max-age=${(DOWNLOAD_LINK_TTL_MS - 60_000) / 1000}`,
      "accept-ranges": "bytes",
      "x-content-type-options": "nosniff",
    });
    expect(headers["last-modified"]).toMatch(/GMT$/);
  });

  it("falls back to the stored type and the key's last segment when the link names neither", async () => {
    const { headers, body } = await get(signer.sign("threads/t1/artifacts/notes.txt"));
    expect(body.toString()).toBe("0123456789");
    expect(headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(headers["content-disposition"]).toBe('attachment; filename="notes.txt"');
  });

  it("answers HEAD with the headers and no body", async () => {
    const { status, headers, body } = await get(signer.sign("threads/t1/artifacts/out/data.bin"), {}, "HEAD");
    expect(status).toBe(200);
    expect(headers["content-length"]).toBe(String(binary.length));
    expect(headers.etag).toBe(`"${sha}"`);
    expect(body.length).toBe(0);
  });

  it("serves one byte range with 206, and 416 for a range past the end", async () => {
    const url = signer.sign("threads/t1/artifacts/notes.txt");
    const part = await get(url, { range: "bytes=2-5" });
    expect(part.status).toBe(206);
    expect(part.body.toString()).toBe("2345");
    expect(part.headers).toMatchObject({ "content-range": "bytes 2-5/10", "content-length": "4" });
    expect((await get(url, { range: "bytes=-3" })).body.toString()).toBe("789");
    const tail = await get(signer.sign("threads/t1/artifacts/out/data.bin"), { range: "bytes=99990-" });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(Buffer.from(binary.subarray(99_990)))).toBe(true);
    const outside = await get(url, { range: "bytes=10-20" });
    expect(outside.status).toBe(416);
    expect(outside.headers["content-range"]).toBe("bytes */10");
    const several = await get(url, { range: "bytes=0-1,4-5" });
    expect([several.status, several.body.toString()]).toEqual([200, "0123456789"]);
  });

  it("honours If-Range only for the current version, and If-None-Match with 304", async () => {
    const url = signer.sign("threads/t1/artifacts/notes.txt");
    const etag = (await get(url, {}, "HEAD")).headers.etag as string;
    expect((await get(url, { range: "bytes=0-0", "if-range": etag })).status).toBe(206);
    const stale = await get(url, { range: "bytes=0-0", "if-range": '"another"' });
    expect([stale.status, stale.body.toString()]).toEqual([200, "0123456789"]);
    const cached = await get(url, { "if-none-match": `"x", W/${etag}` });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
    expect((await get(url, { "if-none-match": '"x"' })).status).toBe(200);
  });

  it("refuses unsigned, tampered and expired links with 403 and a short message", async () => {
    clock.ms = Date.now();
    const url = signer.sign("threads/t1/artifacts/notes.txt", { fileName: "notes.txt" });
    const unsigned = await get(`${base}/v1/blobs/threads/t1/artifacts/notes.txt`);
    expect([unsigned.status, unsigned.body.toString()]).toEqual([403, "this download link is not signed\n"]);
    expect(unsigned.headers["cache-control"]).toBe("no-store");
    const tampered = [
      url.replace("notes.txt?", "out/data.bin?"),
      url.replace("name=notes.txt", "name=evil.html"),
      url.replace(/expires=(\d+)/, (_, n: string) => `expires=${Number(n) + 1}`),
      url.replace("/t1/", "/%2e%2e/"),
      url.replace("/t1/", "/t1%2F/"),
    ];
    for (const link of tampered) {
      const answer = await get(link);
      expect([answer.status, answer.body.toString()], link).toEqual([
        403,
        "this download link is not valid: it was changed, or signed by another server\n",
      ]);
    }
    const other = createBlobUrlSigner({
      signingKey: new Uint8Array(randomBytes(32)),
      baseUrl: () => base,
      now: () => clock.ms,
    });
    expect((await get(other.sign("threads/t1/artifacts/notes.txt"))).status).toBe(403);
    clock.ms += DOWNLOAD_LINK_TTL_MS + 1;
    const expired = await get(url);
    expect([expired.status, expired.body.toString()]).toEqual([
      403,
      "this download link has expired: ask for a new one\n",
    ]);
  });

  it("answers 404 once the object is gone, 405 to other methods, and passes other paths on", async () => {
    clock.ms = Date.now();
    await store.put("threads/t2/artifacts/gone.txt", new TextEncoder().encode("bye"), { contentType: "text/plain" });
    const url = signer.sign("threads/t2/artifacts/gone.txt");
    expect((await get(url)).status).toBe(200);
    await store.deletePrefix("threads/t2/");
    const gone = await get(url);
    expect([gone.status, gone.body.toString()]).toEqual([404, "the file of this download link no longer exists\n"]);
    const post = await get(url, {}, "POST");
    expect([post.status, post.headers.allow]).toEqual([405, "GET, HEAD"]);
    expect((await get(`${base}/v1/script/health`)).status).toBe(418);
    expect((await get(`${base}/v1/blobsx/a`)).status).toBe(418);
  });

  it("serves the same over HTTP/2", async () => {
    clock.ms = Date.now();
    const url = new URL(signer.sign("threads/t1/artifacts/notes.txt"));
    const session = http2.connect(h2base);
    try {
      const stream = session.request({ ":path": `${url.pathname}${url.search}`, range: "bytes=3-4" });
      const [headers, body] = await Promise.all([
        new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once("response", resolve)),
        (async () => {
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          return Buffer.concat(chunks).toString();
        })(),
      ]);
      expect(headers[":status"]).toBe(206);
      expect(headers["content-range"]).toBe("bytes 3-4/10");
      expect(body).toBe("34");
    } finally {
      session.close();
    }
  });
});
