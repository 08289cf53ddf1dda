import { describe, expect, it } from "vitest";
import { parseApkInstalled } from "./apk-installed.js";
import { parseDpkgStatus } from "./dpkg-status.js";
import { distributionOf, parseOsRelease } from "./os-release.js";
import { ALPINE_INSTALLED, DEBIAN_STATUS } from "./scan-test-images.js";

describe("dpkg status", () => {
  it("keeps installed packages with their source name and version, skipping removed ones", () => {
    expect(parseDpkgStatus(DEBIAN_STATUS)).toEqual([
      { name: "libssl3", version: "3.0.11-1~deb12u2", sourceName: "openssl", sourceVersion: "3.0.11-1~deb12u2" },
      { name: "zlib1g", version: "1:1.2.13.dfsg-1", sourceName: "zlib", sourceVersion: "1:1.2.13.dfsg-1" },
      { name: "curl", version: "7.88.1-10+deb12u8", sourceName: "curl", sourceVersion: "7.88.1-10+deb12u8" },
      { name: "libc6", version: "2.36-9+deb12u3", sourceName: "glibc", sourceVersion: "2.36-9+deb12u3" },
      { name: "libc-bin", version: "2.36-9+deb12u3", sourceName: "glibc", sourceVersion: "2.36-9+deb12u3" },
      { name: "libpcre2-8-0", version: "10.42-1+b1", sourceName: "pcre2", sourceVersion: "10.42-1" },
    ]);
  });

  it("takes a paragraph without Status (distroless status.d) and ignores half-installed ones", () => {
    const text =
      "Package: a\nVersion: 1\n\nPackage: b\nStatus: install ok half-installed\nVersion: 2\n\n\nPackage: c\n";
    expect(parseDpkgStatus(text).map((p) => p.name)).toEqual(["a"]);
  });
});

describe("apk installed database", () => {
  it("reads name, version and origin", () => {
    expect(parseApkInstalled(ALPINE_INSTALLED)).toEqual([
      { name: "libcrypto3", version: "3.1.4-r1", sourceName: "openssl", sourceVersion: "3.1.4-r1" },
      { name: "libssl3", version: "3.1.4-r1", sourceName: "openssl", sourceVersion: "3.1.4-r1" },
      { name: "busybox", version: "1.36.1-r15", sourceName: "busybox", sourceVersion: "1.36.1-r15" },
      { name: "musl", version: "1.2.4_git20230717-r4", sourceName: "musl", sourceVersion: "1.2.4_git20230717-r4" },
    ]);
    expect(parseApkInstalled("P:noorigin\nV:1.0-r0\n")[0]!.sourceName).toBe("noorigin");
  });
});

describe("os-release", () => {
  it("reads quoted and bare values and picks the OSV ecosystem", () => {
    const debian = parseOsRelease('# comment\nID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n');
    expect(debian).toEqual({ id: "debian", versionId: "12", versionCodename: "bookworm" });
    expect(distributionOf(debian)).toEqual({ packageFormat: "dpkg", ecosystems: ["Debian:12"] });
    expect(distributionOf(parseOsRelease("ID=debian\nVERSION_CODENAME=bullseye\n"))?.ecosystems).toEqual(["Debian:11"]);
    expect(distributionOf(parseOsRelease("ID=alpine\nVERSION_ID=3.19.1\n"))).toEqual({
      packageFormat: "apk",
      ecosystems: ["Alpine:v3.19"],
    });
    expect(distributionOf(parseOsRelease("ID='ubuntu'\nVERSION_ID=\"22.04\"\n"))?.ecosystems).toEqual([
      "Ubuntu:22.04",
      "Ubuntu:22.04:LTS",
    ]);
    expect(distributionOf(parseOsRelease("ID=debian\nVERSION_CODENAME=sid\n"))).toBeUndefined();
    expect(distributionOf(parseOsRelease('ID="rocky"\nVERSION_ID="9.4"\n'))).toEqual({
      packageFormat: "rpm",
      ecosystems: ["Rocky Linux:9"],
    });
    expect(distributionOf(parseOsRelease('ID="almalinux"\nVERSION_ID="8.10"\n'))?.ecosystems).toEqual(["AlmaLinux:8"]);
    // Fedora publishes no OSV advisories.
    expect(distributionOf(parseOsRelease("ID=fedora\nVERSION_ID=40\n"))).toBeUndefined();
  });
});
