import { beforeAll, describe, expect, it } from "vitest";
import { parseRpmDatabase, readRpmHeader, RpmHeaderError } from "./rpm-database.js";
import { buildRpmDatabase, withUncheckpointedLog } from "./rpm-test-database.js";
import { readSqliteTable, SqliteFormatError } from "./sqlite-reader.js";

let small: Buffer;
let large: Buffer;
beforeAll(async () => {
  small = await buildRpmDatabase([
    { name: "openssl", epoch: 1, version: "3.0.7", release: "24.el9", subpackages: ["libs"] },
    { name: "zlib", version: "1.2.11", release: "40.el9" },
  ]);
  // Headers of many files overflow their page, and many rows make the table's b-tree deeper than a leaf.
  large = await buildRpmDatabase([
    {
      name: "bulk",
      version: "2.0",
      release: "1.el9",
      subpackages: Array.from({ length: 120 }, (_, i) => `part${i}`),
      files: 40,
    },
  ]);
}, 120_000);

describe("rpm's SQLite database", () => {
  it("reads each package's name, [epoch:]version-release and source package", () => {
    const packages = parseRpmDatabase(small);
    expect(packages.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "openssl", version: "1:3.0.7-24.el9", sourceName: "openssl", sourceVersion: "1:3.0.7-24.el9" },
      { name: "openssl-libs", version: "1:3.0.7-24.el9", sourceName: "openssl", sourceVersion: "1:3.0.7-24.el9" },
      { name: "zlib", version: "1.2.11-40.el9", sourceName: "zlib", sourceVersion: "1.2.11-40.el9" },
    ]);
  });

  it("follows overflow pages and interior pages", () => {
    const packages = parseRpmDatabase(large);
    expect(packages).toHaveLength(121);
    expect(new Set(packages.map((p) => p.name)).size).toBe(121);
    expect(packages.find((p) => p.name === "bulk-part119")).toEqual({
      name: "bulk-part119",
      version: "2.0-1.el9",
      sourceName: "bulk",
      sourceVersion: "2.0-1.el9",
    });
    // Headers longer than a page spill into overflow pages; 121 such rows need more than one leaf.
    const headers = readSqliteTable(large, "Packages").map((row) => row[1] as Uint8Array);
    const pageSize = large.readUInt16BE(16);
    expect(headers.filter((h) => h.length > pageSize)).toHaveLength(121);
  });

  it("applies the committed part of a write-ahead log left beside the file", async () => {
    const { file, wal } = await withUncheckpointedLog(
      small,
      "DELETE FROM Packages WHERE hnum = (SELECT min(hnum) FROM Packages);",
    );
    expect(parseRpmDatabase(file)).toHaveLength(3);
    expect(parseRpmDatabase(file, wal)).toHaveLength(2);
    // A log of another generation (its salts do not match the frames') adds nothing.
    const stale = Buffer.from(wal);
    stale.writeUInt32BE((stale.readUInt32BE(16) ^ 1) >>> 0, 16);
    expect(() => parseRpmDatabase(file, stale)).not.toThrow();
    expect(parseRpmDatabase(file, stale)).toHaveLength(3);
  });

  it("refuses damaged files with a format error, never a crash or a hang", () => {
    expect(() => parseRpmDatabase(Buffer.from("not a database"))).toThrow(SqliteFormatError);
    expect(() => parseRpmDatabase(small.subarray(0, 8192))).toThrow(SqliteFormatError);
    // Every byte of the first pages flipped in turn: each read ends, in rows or in a typed error.
    for (let at = 0; at < 3 * 4096; at += 7) {
      const damaged = Buffer.from(small);
      damaged[at] = damaged[at]! ^ 0xff;
      try {
        parseRpmDatabase(damaged);
      } catch (error) {
        expect(error instanceof SqliteFormatError || error instanceof RpmHeaderError).toBe(true);
      }
    }
    expect(() => readRpmHeader(Buffer.from([0, 0, 0, 9, 0, 0, 0, 0]))).toThrow(RpmHeaderError);
  });
});
