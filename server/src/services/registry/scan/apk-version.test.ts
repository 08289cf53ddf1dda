import { describe, expect, it } from "vitest";
import { compareApkVersions, parseApkVersion } from "./apk-version.js";

describe("apk versions", () => {
  it("parses numbers, letter, suffixes and revision", () => {
    expect(parseApkVersion("1.2.3a_rc2_p1-r4")).toEqual({
      numbers: ["1", "2", "3"],
      letter: "a",
      suffixes: [
        { rank: 3, number: "2" },
        { rank: 9, number: "1" },
      ],
      revision: "4",
    });
    expect(parseApkVersion("3.1.4_git20240101~1a2b3c-r0")?.numbers).toEqual(["3", "1", "4"]);
    expect(parseApkVersion("1.0-beta")).toBeUndefined();
    expect(parseApkVersion("")).toBeUndefined();
  });

  it.each([
    ["1.0", "1.0", 0],
    ["1.0-r0", "1.0", 0],
    ["1.0-r1", "1.0-r0", 1],
    ["1.0-r10", "1.0-r9", 1],
    ["1.10", "1.9", 1],
    ["1.2.1", "1.2", 1],
    ["1.2.1", "1.2a", 1],
    ["1.2a", "1.2", 1],
    ["1.2b", "1.2a", 1],
    ["1.0_alpha", "1.0_beta", -1],
    ["1.0_beta", "1.0_pre", -1],
    ["1.0_pre", "1.0_rc", -1],
    ["1.0_rc1", "1.0", -1],
    ["1.0_rc1", "1.0_rc2", -1],
    ["1.0", "1.0_cvs", -1],
    ["1.0_cvs", "1.0_svn", -1],
    ["1.0_svn", "1.0_git", -1],
    ["1.0_git", "1.0_hg", -1],
    ["1.0_hg", "1.0_p", -1],
    ["1.0_p1", "1.0_p2", -1],
    ["1.0_p1-r5", "1.0_p2-r0", -1],
    ["1.02", "1.1", -1],
    ["1.0.2", "1.0.10", -1],
    ["3.1.4-r5", "3.1.4-r6", -1],
    ["3.3.0-r0", "3.1.4-r6", 1],
    ["8.5.0-r0", "8.12.1-r0", -1],
    ["1.0", "not-a-version", -1],
  ])("compares %s with %s as %i", (a, b, expected) => {
    expect(Math.sign(compareApkVersions(a, b))).toBe(expected);
    expect(Math.sign(compareApkVersions(b, a)) || 0).toBe(0 - expected || 0);
  });
});
