import { describe, expect, it } from "vitest";
import { compareDpkgVersions, parseDpkgVersion } from "./dpkg-version.js";

const sign = (n: number) => Math.sign(n);

describe("dpkg versions", () => {
  it("splits epoch, upstream and revision at the first colon and the last hyphen", () => {
    expect(parseDpkgVersion("1:2.30-1+deb12u1")).toEqual({ epoch: 1, upstream: "2.30", revision: "1+deb12u1" });
    expect(parseDpkgVersion("2.0-beta-3")).toEqual({ epoch: 0, upstream: "2.0-beta", revision: "3" });
    expect(parseDpkgVersion("7.88.1")).toEqual({ epoch: 0, upstream: "7.88.1", revision: "" });
    expect(parseDpkgVersion("1:2:3-4")).toEqual({ epoch: 1, upstream: "2:3", revision: "4" });
  });

  it.each([
    // [a, b, expected sign of compare(a, b)]
    ["1.0", "1.0", 0],
    ["1.0", "1.1", -1],
    ["1.10", "1.9", 1],
    ["1.01", "1.1", 0],
    ["1:1.0", "2.0", 1],
    ["0:1.0", "1.0", 0],
    ["1.0~rc1", "1.0", -1],
    ["1.0~~", "1.0~~a", -1],
    ["1.0~~a", "1.0~", -1],
    ["1.0~", "1.0", -1],
    ["1.0", "1.0a", -1],
    ["1.0a", "1.0+", -1],
    ["1.0+", "1.0.", -1],
    ["1.0-1", "1.0-2", -1],
    ["1.0-1", "1.0", 1],
    ["1.0-0", "1.0", 0],
    ["1.2.3-1+deb12u1", "1.2.3-1", 1],
    ["1.2.3-1+deb12u1", "1.2.3-1+deb12u2", -1],
    ["2.36-9+deb12u4", "2.36-9+deb12u10", -1],
    ["7.88.1-10+deb12u5", "7.88.1-10+deb12u8", -1],
    ["1.0+dfsg-1", "1.0-1", 1],
    ["1.0.0", "1.0", 1],
    ["99999999999999999999", "99999999999999999998", 1],
    ["a", "b", -1],
    ["1.0-1ubuntu1", "1.0-1", 1],
    ["3.0.11-1~deb12u2", "3.0.11-1", -1],
  ])("compares %s with %s as %i", (a, b, expected) => {
    expect(sign(compareDpkgVersions(a, b))).toBe(expected);
    expect(sign(compareDpkgVersions(b, a)) || 0).toBe(0 - expected || 0);
  });
});
