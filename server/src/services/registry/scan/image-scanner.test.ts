import { beforeAll, describe, expect, it } from "vitest";
import { loadAdvisoryFeed, type AdvisoryFeed } from "./advisory-feed.js";
import { scanImage, type ScanOutcome } from "./image-scanner.js";
import {
  alpineImage,
  buildImage,
  DEBIAN_OS_RELEASE,
  DEBIAN_STATUS,
  debianImage,
  TEST_FEED_DIR,
  type TestImage,
} from "./scan-test-images.js";
import { buildTar } from "./build-tar.js";
import { buildRpmDatabase, withUncheckpointedLog } from "./rpm-test-database.js";
import { SqliteFormatError } from "./sqlite-reader.js";

let feed: AdvisoryFeed;
beforeAll(async () => {
  feed = await loadAdvisoryFeed(TEST_FEED_DIR);
});

async function scan(image: TestImage, withFeed: AdvisoryFeed | null = feed): Promise<ScanOutcome> {
  const open = async (digest: string) => {
    const bytes = image.blobs.get(digest);
    return bytes
      ? (async function* () {
          yield* [bytes.subarray(0, 100), bytes.subarray(100)];
        })()
      : undefined;
  };
  return scanImage(image.manifest, open, withFeed ?? undefined, { maxDatabaseBytes: 1 << 20 });
}

const summary = (outcome: ScanOutcome) =>
  outcome.status === "Success"
    ? outcome.report.vulnerabilities.map((v) => [v.id, v.severity, v.package, v.version, v.fix_version])
    : outcome;

describe("image scanner", () => {
  it("reports a Debian image's findings through source packages, worst first", async () => {
    const outcome = await scan(debianImage());
    expect(summary(outcome)).toEqual([
      ["TEST-DEB-0001", "Critical", "libssl3", "3.0.11-1~deb12u2", "3.0.15-1~deb12u1"],
      ["TEST-DEB-0004", "High", "libc-bin", "2.36-9+deb12u3", "2.36-9+deb12u4"],
      ["TEST-DEB-0004", "High", "libc6", "2.36-9+deb12u3", "2.36-9+deb12u4"],
      ["TEST-DEB-0005", "Medium", "libpcre2-8-0", "10.42-1+b1", ""],
      ["TEST-DEB-0002", "Low", "zlib1g", "1:1.2.13.dfsg-1", ""],
    ]);
    expect(outcome).toMatchObject({ status: "Success", report: { severity: "Critical", total: 5, fixable: 3 } });
    if (outcome.status !== "Success") return;
    expect(outcome.report.vulnerabilities[0]).toMatchObject({
      description: "openssl: test advisory fixed in a later version",
      links: ["https://security.example/TEST-DEB-0001", "https://tracker.example/openssl"],
    });
    expect(outcome.report.vulnerabilities[4]!.description).toBe(
      "zlib: test advisory without a fix, rated by the distribution.",
    );
  });

  it("reads an Alpine image whose later layer makes the database folder opaque", async () => {
    const outcome = await scan(alpineImage());
    expect(summary(outcome)).toEqual([
      ["TEST-ALP-0001", "Medium", "libcrypto3", "3.1.4-r1", "3.1.4-r5"],
      ["TEST-ALP-0001", "Medium", "libssl3", "3.1.4-r1", "3.1.4-r5"],
      ["TEST-ALP-0002", "Unknown", "busybox", "1.36.1-r15", ""],
    ]);
    expect(outcome).toMatchObject({ report: { severity: "Medium", total: 3, fixable: 2 } });
  });

  it("lets a later layer replace the database (an upgrade) or delete it (a whiteout)", async () => {
    const upgraded = DEBIAN_STATUS.replace("3.0.11-1~deb12u2", "3.0.15-1~deb12u1");
    const replaced = await scan(debianImage([[{ path: "var/lib/dpkg/status", content: upgraded }]]));
    expect(summary(replaced)).not.toContainEqual(expect.arrayContaining(["TEST-DEB-0001"]));
    expect(replaced).toMatchObject({ report: { severity: "High", total: 4 } });

    const removed = await scan(debianImage([[{ path: "var/lib/dpkg/.wh.status", content: "" }]]));
    expect(removed).toEqual({ status: "Unsupported", message: "the image has no dpkg package database" });
  });

  it("reads a distroless image's status.d, one file per package, beside an uncompressed layer", async () => {
    const image = buildImage([
      buildTar([
        ...DEBIAN_OS_RELEASE,
        {
          path: "var/lib/dpkg/status.d/libssl3",
          content: "Package: libssl3\nSource: openssl\nVersion: 3.0.11-1~deb12u2\n",
        },
        { path: "var/lib/dpkg/status.d/libssl3.md5sums", content: "0123  usr/lib/libssl.so.3\n" },
        { path: "var/lib/dpkg/status.d/zlib1g", content: "Package: zlib1g\nSource: zlib\nVersion: 1:1.2.13.dfsg-1\n" },
      ]),
    ]);
    expect(summary(await scan(image))).toEqual([
      ["TEST-DEB-0001", "Critical", "libssl3", "3.0.11-1~deb12u2", "3.0.15-1~deb12u1"],
      ["TEST-DEB-0002", "Low", "zlib1g", "1:1.2.13.dfsg-1", ""],
    ]);
  });

  it("answers NoFeed without a feed, never a clean report", async () => {
    expect(await scan(debianImage(), null)).toEqual({ status: "NoFeed", message: "no advisory feed is loaded" });
  });

  it("answers Unsupported for artifacts, unknown distributions, other OSes and zstd layers", async () => {
    const artifact = buildImage([[{ path: "chart.tgz", content: "x" }]], {
      configMediaType: "application/vnd.cncf.helm.config.v1+json",
    });
    expect(await scan(artifact)).toMatchObject({ status: "Unsupported" });
    const unknown = buildImage([[{ path: "etc/os-release", content: "ID=plan9\nVERSION_ID=4\n" }]]);
    expect(await scan(unknown)).toEqual({
      status: "Unsupported",
      message: "the distribution plan9 4 is not supported",
    });
    const noRelease = buildImage([[{ path: "bin/app", content: "x" }]]);
    expect(await scan(noRelease)).toMatchObject({
      status: "Unsupported",
      message: expect.stringContaining("os-release"),
    });
    expect(await scan(buildImage([[]], { os: "windows" }))).toMatchObject({ status: "Unsupported" });
    const zstd = buildImage([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0])]);
    expect(await scan(zstd)).toMatchObject({ status: "Unsupported", message: expect.stringContaining("zstd") });
  });

  it("answers Error for a missing layer and a malformed manifest", async () => {
    const image = debianImage();
    const missing = { ...image, blobs: new Map([...image.blobs].filter(([d]) => d !== image.layerDigests[1])) };
    expect(await scan(missing)).toEqual({
      status: "Error",
      message: `the layer ${image.layerDigests[1]} is not stored`,
    });
    expect(await scan({ ...image, manifest: Buffer.from("{") })).toMatchObject({ status: "Error" });
  });

  describe("rpm images", () => {
    let rpmdb: Buffer;
    beforeAll(async () => {
      rpmdb = await buildRpmDatabase([
        { name: "openssl", epoch: 1, version: "3.0.7", release: "24.el9", subpackages: ["libs"] },
        { name: "zlib", version: "1.2.11", release: "40.el9" },
      ]);
    }, 60_000);
    const almaRelease = { path: "etc/os-release", content: 'NAME="AlmaLinux"\nID="almalinux"\nVERSION_ID="9.3"\n' };

    it("reads an AlmaLinux image's rpm database, matching binary and source package names with epochs", async () => {
      const image = buildImage([[almaRelease, { path: "var/lib/rpm/rpmdb.sqlite", content: rpmdb }]]);
      expect(summary(await scan(image))).toEqual([
        ["TEST-ALMA-0001", "High", "openssl-libs", "1:3.0.7-24.el9", "1:3.0.7-27.el9"],
        ["TEST-ALMA-0002", "Medium", "zlib", "1.2.11-40.el9", "1.2.11-41.el9"],
        ["TEST-ALMA-0004", "Low", "openssl", "1:3.0.7-24.el9", ""],
        ["TEST-ALMA-0004", "Low", "openssl-libs", "1:3.0.7-24.el9", ""],
      ]);
    });

    it("reads the database where Fedora-based images now keep it, with its write-ahead log", async () => {
      const { file, wal } = await withUncheckpointedLog(
        rpmdb,
        "DELETE FROM Packages WHERE hnum IN (SELECT hnum FROM Name WHERE key = 'zlib');",
      );
      const image = buildImage([
        [
          almaRelease,
          { path: "var/lib/rpm", type: "symlink", linkName: "../../usr/lib/sysimage/rpm" },
          { path: "usr/lib/sysimage/rpm/rpmdb.sqlite", content: file },
          { path: "usr/lib/sysimage/rpm/rpmdb.sqlite-wal", content: wal },
        ],
      ]);
      const outcome = await scan(image);
      expect(outcome).toMatchObject({ status: "Success" });
      expect(outcome.status === "Success" && outcome.report.vulnerabilities.map((v) => v.package)).toEqual([
        "openssl-libs",
        "openssl",
        "openssl-libs",
      ]);
    });

    it("says which rpm databases it cannot read, and answers Error for a damaged one", async () => {
      const berkeley = buildImage([[almaRelease, { path: "var/lib/rpm/Packages", content: "\0".repeat(64) }]]);
      expect(await scan(berkeley)).toEqual({
        status: "Unsupported",
        message: expect.stringContaining("Berkeley DB"),
      });
      const damaged = buildImage([
        [almaRelease, { path: "var/lib/rpm/rpmdb.sqlite", content: rpmdb.subarray(0, 5000) }],
      ]);
      await expect(scan(damaged)).rejects.toThrow(SqliteFormatError);
    });
  });
});
