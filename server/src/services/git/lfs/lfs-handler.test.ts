import { execFile, execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import { createLfsHandler, lfsObjectKey, type LfsAccess } from "./lfs-handler.js";

const REPO_ID = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const root = mkdtempSync(join(tmpdir(), "git-lfs-test-"));
const blobs = createFilesystemBlobStore(join(root, "blobs"));
const WRITER = "Basic " + Buffer.from("x:dk_writer").toString("base64");
const READER = "Basic " + Buffer.from("x:dk_reader").toString("base64");
const lfsBytes = new Map<string, number>();
let server: Server;
let base: string;

beforeAll(async () => {
  const handler = createLfsHandler({
    blobs,
    maxObjectBytes: 64 * 1024 * 1024,
    addLfsBytes: (repoId, bytes) => Promise.resolve(void lfsBytes.set(repoId, (lfsBytes.get(repoId) ?? 0) + bytes)),
    authorize: (authorization, repo, access): Promise<LfsAccess> => {
      const ours = (repo.kind === "id" && repo.repoId === REPO_ID) || (repo.kind === "name" && repo.name === "demo");
      if (!ours) return Promise.resolve({ ok: false, status: 404, message: "repository not found" });
      if (authorization === WRITER || (authorization === READER && access === "read")) {
        return Promise.resolve({ ok: true, orgId: "org-a", repoId: REPO_ID });
      }
      return Promise.resolve(
        authorization === READER
          ? { ok: false, status: 403, message: "git.viewer may not push" }
          : { ok: false, status: 401, message: "credentials required" },
      );
    },
  });
  server = createServer((request, response) => {
    void handler(request, response).then((handled) => handled || response.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function batch(path: string, body: unknown, authorization?: string) {
  return fetch(`${base}${path}/info/lfs/objects/batch`, {
    method: "POST",
    headers: { "content-type": "application/vnd.git-lfs+json", ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
}

const content = randomBytes(1000);
const oid = createHash("sha256").update(content).digest("hex");

describe("LFS batch API and objects", () => {
  it("uploads through the upload action, verifies the oid and counts the bytes once", async () => {
    const answer = await batch(`/${REPO_ID}.git`, { operation: "upload", objects: [{ oid, size: 1000 }] }, WRITER);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/vnd.git-lfs+json");
    const body = (await answer.json()) as { objects: { actions: { upload: { href: string; header: object } } }[] };
    const upload = body.objects[0]!.actions.upload;
    expect(upload.href).toBe(`${base}/${REPO_ID}.git/info/lfs/objects/${oid}`);

    const wrong = await fetch(upload.href, {
      method: "PUT",
      headers: upload.header as HeadersInit,
      body: randomBytes(1000),
    });
    expect(wrong.status).toBe(422);
    expect(await blobs.stat(lfsObjectKey("org-a", REPO_ID, oid))).toBeUndefined();

    for (let i = 0; i < 2; i++) {
      const put = await fetch(upload.href, { method: "PUT", headers: upload.header as HeadersInit, body: content });
      expect(put.status).toBe(200);
    }
    expect(lfsBytes.get(REPO_ID)).toBe(1000);

    const again = await batch(`/org-a/demo.git`, { operation: "upload", objects: [{ oid, size: 1000 }] }, WRITER);
    expect(((await again.json()) as { objects: { actions?: object }[] }).objects[0]!.actions).toBeUndefined();
  });

  it("downloads with read access and answers a per-object 404 for what it lacks", async () => {
    const missing = "0".repeat(64);
    const answer = await batch(
      `/${REPO_ID}.git`,
      {
        operation: "download",
        objects: [
          { oid, size: 1000 },
          { oid: missing, size: 3 },
        ],
      },
      READER,
    );
    const body = (await answer.json()) as {
      objects: { actions?: { download: { href: string } }; error?: { code: number } }[];
    };
    expect(body.objects[1]!.error?.code).toBe(404);
    const get = await fetch(body.objects[0]!.actions!.download.href, { headers: { authorization: READER } });
    expect(Buffer.from(await get.arrayBuffer()).equals(content)).toBe(true);
  });

  it("answers 401 with LFS-Authenticate, 403 for a reader's upload, 404 for another's repo, 422 naming the field", async () => {
    const anonymous = await batch(`/${REPO_ID}.git`, { operation: "download", objects: [{ oid, size: 1 }] });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("lfs-authenticate")).toContain("Basic");
    expect(((await anonymous.json()) as { message: string }).message).toBe("credentials required");
    const reader = await batch(`/${REPO_ID}.git`, { operation: "upload", objects: [{ oid, size: 1 }] }, READER);
    expect(reader.status).toBe(403);
    const other = await batch(`/other/secret.git`, { operation: "download", objects: [{ oid, size: 1 }] }, WRITER);
    expect(other.status).toBe(404);
    const bad = await batch(`/${REPO_ID}.git`, { operation: "upload", objects: [{ oid: "xyz", size: 1 }] }, WRITER);
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { message: string }).message).toContain("objects[0].oid");
    const sha1 = await batch(`/${REPO_ID}.git`, { operation: "upload", hash_algo: "sha1", objects: [] }, WRITER);
    expect(sha1.status).toBe(409);
  });
});

function run(cwd: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = {
      PATH: process.env.PATH,
      HOME: root,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com",
    };
    execFile("git", args, { cwd, env, encoding: "utf8" }, (error, stdout, stderr) =>
      error ? reject(new Error(`git ${args.join(" ")}: ${stderr}`)) : resolve(stdout),
    );
  });
}

describe("LFS with the git-lfs client", () => {
  it("pushes a 5 MiB file and another clone gets the same bytes", async () => {
    const remote = join(root, "remote.git");
    execFileSync("git", ["init", "-q", "--bare", "--initial-branch=main", remote]);
    const lfsUrl = `http://x:dk_writer@127.0.0.1:${new URL(base).port}/${REPO_ID}.git/info/lfs`;
    const work = join(root, "work");
    execFileSync("git", ["init", "-q", "--initial-branch=main", work]);
    await run(work, "lfs", "install", "--local");
    await run(work, "config", "lfs.url", lfsUrl);
    await run(work, "lfs", "track", "*.bin");
    const big = randomBytes(5 * 1024 * 1024);
    writeFileSync(join(work, "big.bin"), big);
    await run(work, "add", ".gitattributes", "big.bin");
    await run(work, "commit", "-qm", "big file");
    await run(work, "push", "-q", remote, "main");
    expect(lfsBytes.get(REPO_ID)).toBe(1000 + big.length);

    const clone = join(root, "clone");
    await run(root, "-c", `lfs.url=${lfsUrl}`, "clone", "-q", remote, clone);
    await run(clone, "lfs", "install", "--local");
    await run(clone, "config", "lfs.url", lfsUrl);
    await run(clone, "lfs", "pull");
    expect(readFileSync(join(clone, "big.bin")).equals(big)).toBe(true);
  });
});
