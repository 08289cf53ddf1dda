import { afterAll, describe, expect, test } from "vitest";
import { diff } from "./diff-commits.js";
import { buildSampleRepository } from "./fixture-repository.js";

const { repo, c1, c2, c3, feature } = buildSampleRepository();
const gitDir = repo.gitDir;
afterAll(() => repo.remove());

describe("diff", () => {
  test("detects renames, flags binary files and counts lines", async () => {
    const result = await diff(gitDir, { from: "v1", to: "v2" });
    expect(result).toMatchObject({
      base_sha: c1,
      head_sha: c2,
      total_additions: 1,
      total_deletions: 0,
      truncated: false,
    });
    expect(result.files).toEqual([
      {
        path: "README.md",
        status: "modified",
        additions: 1,
        deletions: 0,
        binary: false,
        patch: "@@ -1,2 +1,3 @@\n hello\n world\n+again\n",
      },
      {
        path: "docs/manual.md",
        old_path: "docs/guide.md",
        status: "renamed",
        additions: 0,
        deletions: 0,
        binary: false,
        patch: "",
      },
      { path: "image.bin", status: "modified", additions: 0, deletions: 0, binary: true },
    ]);
  });

  test("added and deleted files, by branch names", async () => {
    const forward = await diff(gitDir, { from: "main", to: "feature" });
    expect(forward.base_sha).toBe(c3);
    expect(forward.head_sha).toBe(feature);
    expect(forward.files.map(({ path, status }) => ({ path, status }))).toEqual([
      { path: "README.md", status: "modified" },
      { path: "feature.txt", status: "added" },
      { path: "src/app.ts", status: "modified" },
    ]);
    const backward = await diff(gitDir, { from: "feature", to: "main" });
    expect(backward.files.find((file) => file.path === "feature.txt")).toMatchObject({
      status: "deleted",
      deletions: 1,
    });
  });

  test("stats only drops patch text and keeps the counts", async () => {
    const result = await diff(gitDir, { from: c1, to: c3, statsOnly: true });
    expect(result.files.every((file) => file.patch === undefined)).toBe(true);
    expect(result.files.find((file) => file.path === "README.md")).toMatchObject({ additions: 2, deletions: 1 });
    expect(result.truncated).toBe(false);
  });

  test("patches past the cap are dropped and the result says truncated", async () => {
    const result = await diff(gitDir, { from: "main", to: "feature", maxPatchBytes: 200 });
    expect(result.truncated).toBe(true);
    expect(result.files[0]?.patch).toContain("@@");
    expect(result.files[2]?.patch).toBeUndefined();
    expect(result.files[2]).toMatchObject({ path: "src/app.ts", additions: 1, deletions: 0 });
    const tiny = await diff(gitDir, { from: "main", to: "feature", maxPatchBytes: 1 });
    expect(tiny.truncated).toBe(true);
    expect(tiny.files.every((file) => file.patch === undefined)).toBe(true);
    expect(tiny.total_additions).toBe(3);
  });

  test("bad and unknown refs name their field", async () => {
    await expect(diff(gitDir, { from: "--no-index", to: "main" })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "from",
    });
    await expect(diff(gitDir, { from: "main", to: "nope" })).rejects.toMatchObject({ kind: "not_found", field: "to" });
    await expect(diff(gitDir, { from: "main", to: "main", maxPatchBytes: -1 })).rejects.toMatchObject({
      kind: "invalid_argument",
      field: "maxPatchBytes",
    });
  });
});
