import { describe, expect, it } from "vitest";
import { compareRpmVersions } from "./rpm-version.js";

describe("rpm versions", () => {
  it.each([
    ["1.0", "1.0", 0],
    ["1.0", "2.0", -1],
    ["2.0.1", "2.0", 1],
    ["2.0.1a", "2.0.1", 1],
    ["5.5p1", "5.5p10", -1],
    ["10xyz", "10.1xyz", -1],
    ["xyz10", "xyz10.1", -1],
    ["1.0", "1_0", 0],
    ["1.0", "1..0", 0],
    ["a", "1", -1],
    ["b", "a", 1],
    ["1.010", "1.10", 0],
    ["1.0~rc1", "1.0", -1],
    ["1.0~rc1", "1.0~rc2", -1],
    ["1.0~rc1~git123", "1.0~rc1", -1],
    ["1.0^", "1.0", 1],
    ["1.0^git1", "1.0", 1],
    ["1.0^git1", "1.01", -1],
    ["1.0^git1", "1.0^git2", -1],
    ["1.0^git1", "1.0.1", -1],
    ["1.0~rc1^git1", "1.0~rc1", 1],
    ["1.0~rc1^git1", "1.0", -1],
    ["1:1.0-1", "2.0-1", 1],
    ["0:1.0-1", "1.0-1", 0],
    ["1.0-1.el9", "1.0-2.el9", -1],
    ["1.0-1.el9_2", "1.0-1.el9", 1],
    ["3.0.7-24.el9", "3.0.7-27.el9", -1],
  ])("compares %s with %s as %i", (a, b, expected) => {
    expect(Math.sign(compareRpmVersions(a, b))).toBe(expected);
    expect(Math.sign(compareRpmVersions(b, a)) || 0).toBe(0 - expected || 0);
  });
});
