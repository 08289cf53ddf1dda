import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import {
  freshDatabase,
  runAdmin,
  startPlatformServer,
  type StartedServer,
  type TestPostgresDatabase,
} from "./platform-server.js";

// kill -9 of the server while a chunk of a blob upload streams in: after a restart on the same
// data, the upload stands at its last complete chunk, resumes there, and the blob is exactly the bytes sent.
let dataDir: string;
let database: TestPostgresDatabase | undefined;
let server: StartedServer | undefined;
afterAll(async () => {
  if (server?.process.exitCode === null) await server.stop();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

it("resumes an upload at its last complete chunk after the server is killed mid-chunk", async () => {
  dataDir = await mkdtemp(join(tmpdir(), "registry-crash-"));
  database = await freshDatabase();
  server = await startPlatformServer([], { dataDir, database });
  const created = await runAdmin(dataDir, ["create-org", "cratecrash"]);
  const { apiKey } = created.json as { apiKey: string };
  const auth = `Basic ${Buffer.from(`x:${apiKey}`).toString("base64")}`;
  const base = () => server!.urls.registry!;
  const repo = "cratecrash/app";
  const bytes = randomBytes(3 * 1024 * 1024);
  const first = bytes.subarray(0, 1024 * 1024);

  const started = await fetch(`${base()}/v2/${repo}/blobs/uploads/`, {
    method: "POST",
    headers: { authorization: auth },
  });
  expect(started.status).toBe(202);
  const location = started.headers.get("location")!;
  const chunk = await fetch(`${base()}${location}`, {
    method: "PATCH",
    headers: { authorization: auth, "content-type": "application/octet-stream", "content-range": "0-1048575" },
    body: new Uint8Array(first),
  });
  expect(chunk.status).toBe(202);

  // The second chunk: half of it sent, then the server dies while it waits for the rest.
  const url = new URL(`${base()}${location}`);
  const inFlight = request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: "PATCH",
    headers: {
      authorization: auth,
      "content-type": "application/octet-stream",
      "content-range": "1048576-2097151",
      "content-length": String(1024 * 1024),
    },
  });
  inFlight.on("error", () => {});
  inFlight.write(bytes.subarray(1024 * 1024, 1024 * 1024 + 512 * 1024));
  await new Promise((resolve) => setTimeout(resolve, 500));
  server.process.kill("SIGKILL");
  await new Promise((resolve) => server!.process.once("exit", resolve));
  inFlight.destroy();
  // The killed chunk's partial file is left in the store's tmp/ folder; once it is a day old, the
  // server sweeps it (at start, then hourly). Aged here instead of waiting.
  const temporary = join(dataDir, "blobs", "tmp");
  const partial = await readdir(temporary);
  expect(partial.length).toBeGreaterThan(0);
  const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
  for (const name of partial) await utimes(join(temporary, name), twoDaysAgo, twoDaysAgo);
  server = await startPlatformServer([], { dataDir, database });
  await vi.waitFor(
    async () => expect((await readdir(temporary)).filter((name) => partial.includes(name))).toEqual([]),
    { timeout: 10_000 },
  );

  const status = await fetch(`${base()}${location}`, { headers: { authorization: auth } });
  expect(status.status).toBe(204);
  expect(status.headers.get("range")).toBe("0-1048575");

  const rest = await fetch(`${base()}${location}?digest=sha256:${createHash("sha256").update(bytes).digest("hex")}`, {
    method: "PUT",
    headers: { authorization: auth, "content-type": "application/octet-stream", "content-range": "1048576-3145727" },
    body: new Uint8Array(bytes.subarray(1024 * 1024)),
  });
  expect(rest.status).toBe(201);
  const digest = rest.headers.get("docker-content-digest")!;
  const read = await fetch(`${base()}/v2/${repo}/blobs/${digest}`, { headers: { authorization: auth } });
  expect(Buffer.from(await read.arrayBuffer()).equals(bytes)).toBe(true);
}, 180_000);
