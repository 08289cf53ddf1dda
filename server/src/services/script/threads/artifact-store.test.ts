import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { text } from "node:stream/consumers";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../test/test-database.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import { createFilesystemBlobStore } from "../../../blob/filesystem-blob-store.js";
import { ToolError } from "../tools/tool-error.js";
import { artifactKey, createArtifactStore, type ArtifactStore } from "./artifact-store.js";
import { createThreadStore } from "./thread-store.js";

let database: TestDatabase;
let root: string;
let blobs: BlobStore;
let artifacts: ArtifactStore;
beforeAll(async () => {
  database = await openTestDatabase();
  root = await mkdtemp(join(tmpdir(), "artifact-store-"));
  blobs = createFilesystemBlobStore(root);
  artifacts = createArtifactStore(database.db, blobs);
});
afterAll(async () => {
  await database.close();
  await rm(root, { recursive: true, force: true });
});

async function databaseClockMs(): Promise<number> {
  const result = await database.db.execute(sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`);
  const [row] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { ms: string | number }[];
  return Number(row!.ms);
}

async function newThread() {
  const orgId = await database.createOrganization();
  const thread = await createThreadStore(database.db).insert({
    orgId,
    scriptName: "s",
    scriptVersion: 1,
    input: {},
    env: {},
    metadata: {},
    totalSteps: 1,
  });
  return { orgId, threadId: thread.id };
}

const bytes = (value: string) => new TextEncoder().encode(value);

describe(`the artifact store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("puts the bytes under the thread's prefix and records type, size, hash and step", async () => {
    const { orgId, threadId } = await newThread();
    const row = await artifacts.write(
      { orgId, threadId, stepPath: "2.0.1" },
      "out/report.csv",
      "text/csv",
      bytes("a,b\n1,2\n"),
    );
    const blob = await blobs.open(`threads/${threadId}/artifacts/out/report.csv`);
    expect(await text(blob!.read())).toBe("a,b\n1,2\n");
    expect(row).toMatchObject({
      threadId,
      orgId,
      path: "out/report.csv",
      contentType: "text/csv",
      sizeBytes: 8,
      sha256: blob!.sha256,
      stepPath: "2.0.1",
    });
    expect(row.createdAt).toBeGreaterThan(0);
    expect(row.updatedAt).toBe(row.createdAt);
  });

  it("replaces a path written again: one row, the newest bytes, the first creation time", async () => {
    const { orgId, threadId } = await newThread();
    const first = await artifacts.write({ orgId, threadId, stepPath: "0" }, "same.txt", "text/plain", bytes("first"));
    // Rows take their times from the database clock: the second write comes once it has moved on.
    await vi.waitFor(async () => expect(await databaseClockMs()).toBeGreaterThan(first.updatedAt));
    const second = await artifacts.write(
      { orgId, threadId, stepPath: "3" },
      "same.txt",
      "application/json",
      bytes('{"n":2}'),
    );
    const rows = await artifacts.list(orgId, threadId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      contentType: "application/json",
      sizeBytes: 7,
      stepPath: "3",
      sha256: second.sha256,
      createdAt: first.createdAt,
    });
    expect(rows[0]!.updatedAt).toBeGreaterThan(first.updatedAt);
    expect(await text((await blobs.open(artifactKey(threadId, "same.txt")))!.read())).toBe('{"n":2}');
  });

  it("lists a thread's artifacts by path in code point order, within its organization only", async () => {
    const { orgId, threadId } = await newThread();
    const other = await newThread();
    for (const path of ["b.txt", "a/z.txt", "B.txt", "a.txt", "é.txt", "a/b/c.txt"]) {
      await artifacts.write({ orgId, threadId, stepPath: "0" }, path, "text/plain", bytes(path));
    }
    await artifacts.write({ ...other, stepPath: "0" }, "theirs.txt", "text/plain", bytes("x"));
    expect((await artifacts.list(orgId, threadId)).map((r) => r.path)).toEqual([
      "B.txt",
      "a.txt",
      "a/b/c.txt",
      "a/z.txt",
      "b.txt",
      "é.txt",
    ]);
    expect(await artifacts.list(other.orgId, threadId)).toEqual([]);
    expect(await artifacts.list(orgId, other.threadId)).toEqual([]);
  });

  it("refuses what the object store cannot hold as the step's input at fault, recording nothing", async () => {
    const { orgId, threadId } = await newThread();
    const failure = await artifacts
      .write({ orgId, threadId, stepPath: "0" }, "x.txt", "not a type", bytes("x"))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ToolError);
    expect(failure).toMatchObject({
      reason: "invalid_input",
      message: expect.stringMatching(/^artifact.write: content type "not a type"/),
    });
    expect(await artifacts.list(orgId, threadId)).toEqual([]);
  });
});
