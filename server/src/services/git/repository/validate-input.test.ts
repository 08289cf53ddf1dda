import { describe, expect, test } from "vitest";
import { validateRefName } from "./validate-ref-name.js";
import { validateRepoPath } from "./validate-repo-path.js";

describe("validateRefName", () => {
  test.each(["main", "feature/x", "refs/heads/main", "v1.0", "release-2024", "abc123", "a.b/c_d"])(
    "accepts %s",
    (ref) => {
      expect(validateRefName(ref)).toBe(ref);
    },
  );

  test.each([
    ["", "must not be empty"],
    ["-main", "must not start with -"],
    ["--upload-pack=x", "must not start with -"],
    ["a..b", ".."],
    ["a b", "spaces"],
    ["a\tb", "control"],
    ["a\u0000b", "control"],
    ["a~1", "~^:?*["],
    ["a^", "~^:?*["],
    ["a:b", "~^:?*["],
    ["a?", "~^:?*["],
    ["a*", "~^:?*["],
    ["a[b", "~^:?*["],
    ["a\\b", "~^:?*["],
    ["a@{1}", "@{"],
    ["@", "must not be @"],
    ["main.lock", ".lock"],
    ["refs/heads/x.lock/y", ".lock"],
    ["main/", "end with /"],
    ["main.", "end with /"],
    ["/main", "start with /"],
    ["a//b", "//"],
    ["refs/.hidden", "starting with ."],
    ["x".repeat(1025), "at most"],
  ])("refuses %j", (ref, why) => {
    expect(() => validateRefName(ref, "from")).toThrow(
      expect.objectContaining({ kind: "invalid_argument", field: "from" }),
    );
    expect(() => validateRefName(ref, "from")).toThrow(why);
  });
});

describe("validateRepoPath", () => {
  test.each([
    [undefined, ""],
    ["", ""],
    ["src", "src"],
    ["a//b", "a/b"],
    ["a/./b/", "a/b"],
    ["dir/", "dir"],
    ["-rf", "-rf"],
    ["naïve file.txt", "naïve file.txt"],
  ])("accepts %j as %j", (path, normal) => {
    expect(validateRepoPath(path)).toBe(normal);
  });

  test.each([
    ["../etc/passwd", ".."],
    ["a/../../b", ".."],
    ["a/..", ".."],
    ["/etc/passwd", "leading /"],
    ["a\u0000b", "NUL"],
  ])("refuses %j", (path, why) => {
    expect(() => validateRepoPath(path)).toThrow(expect.objectContaining({ kind: "invalid_argument", field: "path" }));
    expect(() => validateRepoPath(path)).toThrow(why);
  });
});
