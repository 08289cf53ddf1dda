import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadAdvisoryFeed } from "./advisory-feed.js";
import { matchAdvisory } from "./advisory-match.js";
import { compareDpkgVersions } from "./dpkg-version.js";
import { advisoriesOfOsvRecord, type PackageAdvisory, type RangeEvent } from "./osv-advisory.js";
import { TEST_FEED_DIR } from "./scan-test-images.js";

const advisory = (ranges: RangeEvent[][], versions: string[] = []): PackageAdvisory => ({
  id: "T",
  severity: "Unknown",
  description: "",
  links: [],
  ranges,
  versions,
});
const match = (a: PackageAdvisory, version: string) => matchAdvisory(a, version, compareDpkgVersions);

describe("advisory matching", () => {
  it("reads introduced, fixed and last_affected events in version order", () => {
    const twoRanges = advisory([
      [{ fixed: "4.0-1" }, { introduced: "3.0-1" }, { fixed: "2.0-1" }, { introduced: "1.0-1" }],
    ]);
    expect(match(twoRanges, "0.9-1")).toBeUndefined();
    expect(match(twoRanges, "1.5-1")).toEqual({ fixVersion: "2.0-1" });
    expect(match(twoRanges, "2.0-1")).toBeUndefined();
    expect(match(twoRanges, "3.5-1")).toEqual({ fixVersion: "4.0-1" });
    expect(match(twoRanges, "4.0-1")).toBeUndefined();

    const lastAffected = advisory([[{ introduced: "0" }, { last_affected: "1.2-3" }]]);
    expect(match(lastAffected, "1.2-3")).toEqual({ fixVersion: "" });
    expect(match(lastAffected, "1.2-3+deb12u1")).toBeUndefined();
    expect(match(advisory([[{ introduced: "0" }]]), "0~0")).toEqual({ fixVersion: "" });
  });

  it("matches a listed version exactly, as the ecosystem compares versions", () => {
    const listed = advisory([], ["1:2.0-1", "2.1-1"]);
    expect(match(listed, "2.0-1")).toBeUndefined();
    expect(match(listed, "1:2.0-1")).toEqual({ fixVersion: "" });
    expect(match(listed, "2.1-01")).toEqual({ fixVersion: "" });
  });
});

describe("OSV records", () => {
  it("takes severity from the package's rating, the record's rating, then CVSS, else Unknown", () => {
    const base = { id: "X", affected: [{ package: { ecosystem: "Debian:12", name: "p" } }] };
    const severityOf = (record: object) => advisoriesOfOsvRecord(record)[0]?.advisory.severity;
    expect(severityOf(base)).toBe("Unknown");
    expect(
      severityOf({ ...base, severity: [{ type: "CVSS_V3", score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H" }] }),
    ).toBe("Critical");
    expect(severityOf({ ...base, database_specific: { severity: "MODERATE" }, severity: [] })).toBe("Medium");
    expect(
      severityOf({
        ...base,
        database_specific: { severity: "HIGH" },
        affected: [{ package: { ecosystem: "Debian:12", name: "p" }, ecosystem_specific: { severity: "low" } }],
      }),
    ).toBe("Low");
    expect(advisoriesOfOsvRecord({ ...base, withdrawn: "2026-01-01T00:00:00Z" })).toEqual([]);
    expect(advisoriesOfOsvRecord({ affected: [] })).toEqual([]);
    expect(advisoriesOfOsvRecord("nonsense")).toEqual([]);
  });

  it("keeps only ECOSYSTEM ranges and valid events", () => {
    const [found] = advisoriesOfOsvRecord({
      id: "X",
      affected: [
        {
          package: { ecosystem: "Alpine:v3.19", name: "p" },
          ranges: [
            { type: "GIT", events: [{ introduced: "abc" }] },
            { type: "ECOSYSTEM", events: [{ introduced: "0" }, { fixed: 5 }, { fixed: "1.0-r1" }] },
          ],
        },
      ],
    });
    expect(found?.advisory.ranges).toEqual([[{ introduced: "0" }, { fixed: "1.0-r1" }]]);
  });
});

describe("advisory feed", () => {
  it("indexes the shipped test feed by ecosystem and package, and versions it by content", async () => {
    const feed = await loadAdvisoryFeed(TEST_FEED_DIR);
    expect(feed.advisoriesFor("Debian:12", "glibc").map((a) => a.id)).toEqual(["TEST-DEB-0004"]);
    expect(feed.advisoriesFor("Debian:12", "zlib").map((a) => a.id)).toEqual(["TEST-DEB-0002"]);
    expect(feed.advisoriesFor("Debian:11", "openssl").map((a) => a.id)).toEqual(["TEST-DEB-0006"]);
    expect(feed.advisoriesFor("Debian:12", "libc6")).toEqual([]);
    expect((await loadAdvisoryFeed(TEST_FEED_DIR)).version).toBe(feed.version);
  });

  it("skips a file that is not JSON and changes version when a file changes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "osv-"));
    try {
      const record = { id: "A", affected: [{ package: { ecosystem: "Debian:12", name: "p" }, versions: ["1"] }] };
      await writeFile(join(dir, "a.json"), JSON.stringify(record));
      await writeFile(join(dir, "broken.json"), "{");
      await writeFile(join(dir, "notes.txt"), "ignored");
      const first = await loadAdvisoryFeed(dir);
      expect(first.size).toBe(1);
      expect(first.skipped).toEqual([{ file: "broken.json", reason: "not valid JSON" }]);
      await writeFile(join(dir, "a.json"), JSON.stringify({ ...record, summary: "changed" }));
      expect((await loadAdvisoryFeed(dir)).version).not.toBe(first.version);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
