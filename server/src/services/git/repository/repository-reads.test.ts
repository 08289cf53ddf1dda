import { afterAll, describe, expect, test } from "vitest";
import { buildSampleRepository, FixtureRepository } from "./fixture-repository.js";
import { listBranches } from "./list-branches.js";
import { listCommits } from "./list-commits.js";
import { readBlob } from "./read-blob.js";
import { readTree } from "./read-tree.js";
import { repositorySize } from "./repository-size.js";
import { resolveRef } from "./resolve-ref.js";

const { repo, c1, c2, c3, feature, clash } = buildSampleRepository();
const gitDir = repo.gitDir;
const empty = new FixtureRepository();
afterAll(() => {
  repo.remove();
  empty.remove();
});

describe("listBranches", () => {
  test("lists every branch by name with its commit and the default flagged", async () => {
    expect(await listBranches(gitDir, "main")).toEqual([
      { name: "clash", sha: clash, is_default: false },
      { name: "feature", sha: feature, is_default: false },
      { name: "main", sha: c3, is_default: true },
    ]);
  });

  test("an empty repository has none", async () => {
    expect(await listBranches(empty.gitDir, "main")).toEqual([]);
  });
});

describe("resolveRef", () => {
  test("full refs, short branch and tag names (annotated tags peeled) and ids", async () => {
    expect(await resolveRef(gitDir, "refs/heads/main")).toEqual({ ref: "refs/heads/main", sha: c3 });
    expect(await resolveRef(gitDir, "feature")).toEqual({ ref: "refs/heads/feature", sha: feature });
    expect(await resolveRef(gitDir, "v1")).toEqual({ ref: "refs/tags/v1", sha: c1 });
    expect(await resolveRef(gitDir, "refs/tags/v2")).toEqual({ ref: "refs/tags/v2", sha: c2 });
    expect(await resolveRef(gitDir, c2)).toEqual({ ref: c2, sha: c2 });
    expect(await resolveRef(gitDir, c2.slice(0, 10))).toEqual({ ref: c2, sha: c2 });
  });

  test("a branch wins over a tag of the same name", async () => {
    repo.git("tag", "feature", c1);
    try {
      expect(await resolveRef(gitDir, "feature")).toEqual({ ref: "refs/heads/feature", sha: feature });
    } finally {
      repo.git("tag", "-d", "feature");
    }
  });

  test("unknown names and ids, and unborn branches, resolve to nothing", async () => {
    expect(await resolveRef(gitDir, "nope")).toBeUndefined();
    expect(await resolveRef(gitDir, "refs/heads/nope")).toBeUndefined();
    expect(await resolveRef(gitDir, "deadbeef")).toBeUndefined();
    expect(await resolveRef(empty.gitDir, "main")).toBeUndefined();
  });

  test("a name below an existing ref does not match by prefix", async () => {
    expect(await resolveRef(gitDir, "refs/heads")).toBeUndefined();
  });

  test("bad names are refused before git sees them", async () => {
    await expect(resolveRef(gitDir, "--output=/tmp/x")).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "ref",
    });
    await expect(resolveRef(gitDir, "main@{1}")).rejects.toMatchObject({ kind: "invalid_argument" });
    await expect(resolveRef(gitDir, "HEAD~1")).rejects.toMatchObject({ kind: "invalid_argument" });
  });
});

describe("readTree", () => {
  test("the root: directories first, then files, symlinks and submodules by name, with blob sizes", async () => {
    const tree = await readTree(gitDir, { ref: "main" });
    expect(tree).toMatchObject({ ref: "refs/heads/main", sha: c3, path: "" });
    expect(tree.entries).toEqual([
      { name: "docs", kind: "dir" },
      { name: "src", kind: "dir" },
      { name: "vendor", kind: "dir" },
      { name: "README.md", kind: "file", size: 28 },
      { name: "café.txt", kind: "file", size: Buffer.byteLength("naïve ☕\n") },
      { name: "image.bin", kind: "file", size: 3 },
      { name: "link", kind: "symlink", size: 9 },
    ]);
  });

  test("nested directories, with the path normalised", async () => {
    expect(await readTree(gitDir, { ref: c1, path: "src//lib/" })).toEqual({
      ref: c1,
      sha: c1,
      path: "src/lib",
      entries: [{ name: "util.ts", kind: "file", size: 23 }],
    });
    expect((await readTree(gitDir, { ref: "v1", path: "vendor" })).entries).toEqual([
      { name: "sub", kind: "submodule" },
    ]);
  });

  test("a file, a submodule or a missing path is not a directory", async () => {
    for (const path of ["README.md", "vendor/sub", "nope", "docs/guide.md"]) {
      await expect(readTree(gitDir, { ref: "main", path })).rejects.toMatchObject({ kind: "not_found", field: "path" });
    }
  });

  test("path traversal and bad refs are refused, unknown refs are not found", async () => {
    await expect(readTree(gitDir, { ref: "main", path: "../../etc" })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "path",
    });
    await expect(readTree(gitDir, { ref: "main", path: "/etc" })).rejects.toMatchObject({ kind: "invalid_argument" });
    await expect(readTree(gitDir, { ref: "-x" })).rejects.toMatchObject({ kind: "invalid_argument", field: "ref" });
    await expect(readTree(gitDir, { ref: "nope" })).rejects.toMatchObject({ kind: "not_found", field: "ref" });
  });
});

describe("readBlob", () => {
  test("text comes back as utf8 with its blob id and size", async () => {
    const blob = await readBlob(gitDir, { ref: "main", path: "café.txt" });
    expect(blob).toMatchObject({
      path: "café.txt",
      encoding: "utf8",
      content: "naïve ☕\n",
      binary: false,
      truncated: false,
    });
    expect(blob.size).toBe(Buffer.byteLength("naïve ☕\n"));
    expect(blob.sha).toBe(repo.git("rev-parse", "main:café.txt"));
  });

  test("a NUL in the first 8000 bytes makes a file binary, returned as base64", async () => {
    expect(await readBlob(gitDir, { ref: "v1", path: "image.bin" })).toMatchObject({
      encoding: "base64",
      content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff]).toString("base64"),
      binary: true,
      size: 8,
      truncated: false,
    });
  });

  test("content past maxBytes is cut and flagged, without splitting a character", async () => {
    const blob = await readBlob(gitDir, { ref: "main", path: "café.txt", maxBytes: 4 });
    // "naï" is exactly 4 bytes; at 3 the cut falls inside the two bytes of "ï".
    expect(blob).toMatchObject({
      encoding: "utf8",
      content: "naï",
      truncated: true,
      size: Buffer.byteLength("naïve ☕\n"),
    });
    const split = await readBlob(gitDir, { ref: "main", path: "café.txt", maxBytes: 3 });
    expect(split).toMatchObject({ encoding: "utf8", content: "na", truncated: true });
  });

  test("a symlink's content is its target", async () => {
    expect(await readBlob(gitDir, { ref: "main", path: "link" })).toMatchObject({
      content: "README.md",
      encoding: "utf8",
    });
  });

  test("directories, submodules and missing files are not found; bad input is refused", async () => {
    for (const path of ["src", "vendor/sub", "missing.txt", "README.md/x"]) {
      await expect(readBlob(gitDir, { ref: "main", path })).rejects.toMatchObject({ kind: "not_found", field: "path" });
    }
    await expect(readBlob(gitDir, { ref: "main", path: "" })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "path",
    });
    await expect(readBlob(gitDir, { ref: "main", path: "src/../../x" })).rejects.toMatchObject({
      kind: "invalid_argument",
    });
    await expect(readBlob(gitDir, { ref: "main", path: "README.md", maxBytes: 0 })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "maxBytes",
    });
  });
});

describe("listCommits", () => {
  test("newest first, with author, ISO time, subject and full message", async () => {
    const listing = await listCommits(gitDir, { ref: "main" });
    expect(listing).toMatchObject({ ref: "refs/heads/main", sha: c3 });
    expect(listing.commits.map((commit) => commit.sha)).toEqual([c3, c2, c1]);
    expect(listing.commits[2]).toEqual({
      sha: c1,
      author: "Ada Lovelace",
      email: "ada@example.com",
      time: expect.stringMatching(/^2023-11-14T\d\d:\d\d:\d\d\.000Z$/),
      subject: "First commit",
      message: "First commit\n\nWith a body.",
    });
  });

  test("limit and path narrow the history", async () => {
    expect((await listCommits(gitDir, { ref: "main", limit: 1 })).commits.map((c) => c.sha)).toEqual([c3]);
    expect((await listCommits(gitDir, { ref: "feature", path: "src/app.ts" })).commits.map((c) => c.sha)).toEqual([
      feature,
      c1,
    ]);
    expect((await listCommits(gitDir, { ref: "main", path: "no/such" })).commits).toEqual([]);
  });

  test("limit is clamped to 500; zero, negatives and fractions are refused", async () => {
    expect((await listCommits(gitDir, { ref: "main", limit: 10_000 })).commits).toHaveLength(3);
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(listCommits(gitDir, { ref: "main", limit })).rejects.toMatchObject({
        kind: "invalid_argument",
        field: "limit",
      });
    }
    await expect(listCommits(gitDir, { ref: "main", path: "../x" })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "path",
    });
  });
});

describe("repositorySize", () => {
  test("counts loose objects and packs", async () => {
    const loose = await repositorySize(gitDir);
    expect(loose.size_bytes).toBeGreaterThan(0);
    expect(loose.pack_count).toBe(0);
    repo.git("gc", "--quiet");
    expect((await repositorySize(gitDir)).pack_count).toBe(1);
  });
});
