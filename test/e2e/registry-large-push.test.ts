import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, expect, it } from "vitest";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// A 512 MiB layer streams through the registry into object storage: the server's resident memory
// grows by far less than the layer, so uploads never hold a whole layer in memory.
const SIZE = 512 * 1024 * 1024;
const CHUNK = 1024 * 1024;
let server: StartedServer | undefined;
afterAll(async () => {
  await server?.stop();
});

async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

it("streams a 512 MiB blob without holding it in memory", async () => {
  server = await startPlatformServer();
  const created = await runAdmin(server.dataDir, ["create-org", "bigpush"]);
  const { apiKey } = created.json as { apiKey: string };
  const auth = `Basic ${Buffer.from(`x:${apiKey}`).toString("base64")}`;
  const base = server.urls.registry!;
  const pid = server.process.pid!;

  const started = await fetch(`${base}/v2/bigpush/layers/blobs/uploads/`, {
    method: "POST",
    headers: { authorization: auth },
  });
  const location = started.headers.get("location")!;
  const before = await residentBytes(pid);
  let peak = before;
  const sampler = setInterval(() => {
    void residentBytes(pid).then((rss) => (peak = Math.max(peak, rss)));
  }, 100);

  const hash = createHash("sha256");
  const block = Buffer.alloc(CHUNK);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= SIZE) return controller.close();
      block.writeUInt32BE(sent / CHUNK, 0);
      hash.update(block);
      controller.enqueue(new Uint8Array(block));
      sent += CHUNK;
    },
  });
  const patched = await fetch(`${base}${location}`, {
    method: "PATCH",
    headers: { authorization: auth, "content-type": "application/octet-stream" },
    body,
    duplex: "half",
  } as RequestInit);
  expect(patched.status).toBe(202);
  expect(patched.headers.get("range")).toBe(`0-${SIZE - 1}`);
  const digest = `sha256:${hash.digest("hex")}`;
  const done = await fetch(`${base}${location}?digest=${digest}`, { method: "PUT", headers: { authorization: auth } });
  clearInterval(sampler);
  expect(done.status).toBe(201);

  const head = await fetch(`${base}/v2/bigpush/layers/blobs/${digest}`, {
    method: "HEAD",
    headers: { authorization: auth },
  });
  expect(head.headers.get("content-length")).toBe(String(SIZE));
  expect(peak - before).toBeLessThan(200 * 1024 * 1024);
}, 300_000);
