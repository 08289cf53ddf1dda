import type { InstalledPackage } from "./installed-package.js";
import { readSqliteTable, SqliteFormatError } from "./sqlite-reader.js";

/** rpm header tags the scanner reads (rpmtag.h). */
const TAG_NAME = 1000;
const TAG_VERSION = 1001;
const TAG_RELEASE = 1002;
const TAG_EPOCH = 1003;
const TAG_SOURCERPM = 1044;
const TYPE_INT32 = 4;
const TYPE_STRING = 6;
const INDEX_ENTRY_BYTES = 16;
/** rpm refuses headers with more entries than this (hdrchkTags). */
const MAX_HEADER_ENTRIES = 0xffff;

export class RpmHeaderError extends Error {}

/**
 * The packages of rpm's SQLite database (`rpmdb.sqlite`, with its `-wal` when there is one): one
 * row of table `Packages` per package, its `blob` an rpm header. A package's version is
 * `[epoch:]version-release` as advisories write it; its source package is the name in `SOURCERPM`
 * (`openssl-3.0.7-24.el9.src.rpm` is `openssl`), whose version is the package's own. Rows
 * without a source package (the `gpg-pubkey` entries of imported keys) are not packages.
 */
export function parseRpmDatabase(file: Uint8Array, wal?: Uint8Array): InstalledPackage[] {
  const packages: InstalledPackage[] = [];
  for (const row of readSqliteTable(file, "Packages", wal)) {
    const blob = row.find((value): value is Uint8Array => value instanceof Uint8Array);
    if (!blob) throw new SqliteFormatError("a row of Packages holds no header");
    const header = readRpmHeader(blob);
    const name = header.string(TAG_NAME);
    const version = header.string(TAG_VERSION);
    const sourceRpm = header.string(TAG_SOURCERPM);
    if (!name || !version || !sourceRpm) continue;
    const epoch = header.int32(TAG_EPOCH);
    const release = header.string(TAG_RELEASE);
    const evr = `${epoch === undefined ? "" : `${epoch}:`}${version}${release ? `-${release}` : ""}`;
    packages.push({ name, version: evr, sourceName: sourceRpmName(sourceRpm), sourceVersion: evr });
  }
  return packages;
}

/** `openssl-3.0.7-24.el9.src.rpm` → `openssl`: the name is what precedes the last two hyphens. */
function sourceRpmName(sourceRpm: string): string {
  const parts = sourceRpm.replace(/\.(no)?src\.rpm$/, "").split("-");
  return parts.length > 2 ? parts.slice(0, -2).join("-") : sourceRpm;
}

interface RpmHeader {
  string(tag: number): string | undefined;
  int32(tag: number): number | undefined;
}

/**
 * An rpm header as the database stores it: the count of index entries and the size of the data
 * (32-bit big-endian each), the entries (tag, type, offset, count), then the data they point into.
 */
export function readRpmHeader(blob: Uint8Array): RpmHeader {
  if (blob.length < 8) throw new RpmHeaderError("an rpm header is shorter than its preamble");
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const entries = view.getUint32(0);
  const dataBytes = view.getUint32(4);
  const dataAt = 8 + entries * INDEX_ENTRY_BYTES;
  if (entries > MAX_HEADER_ENTRIES || dataAt + dataBytes > blob.length)
    throw new RpmHeaderError("an rpm header's index or data runs past its end");
  const find = (tag: number, type: number) => {
    for (let i = 0; i < entries; i++) {
      const at = 8 + i * INDEX_ENTRY_BYTES;
      if (view.getInt32(at) !== tag) continue;
      const offset = view.getInt32(at + 8);
      if (view.getUint32(at + 4) !== type || view.getUint32(at + 12) < 1 || offset < 0 || offset >= dataBytes)
        throw new RpmHeaderError(`rpm header tag ${tag} is not of the type rpm gives it`);
      return dataAt + offset;
    }
    return undefined;
  };
  return {
    string(tag) {
      const at = find(tag, TYPE_STRING);
      if (at === undefined) return undefined;
      const end = blob.indexOf(0, at);
      if (end === -1 || end > dataAt + dataBytes) throw new RpmHeaderError(`rpm header tag ${tag} is not terminated`);
      return new TextDecoder().decode(blob.subarray(at, end));
    },
    int32(tag) {
      const at = find(tag, TYPE_INT32);
      if (at === undefined) return undefined;
      if (at + 4 > dataAt + dataBytes) throw new RpmHeaderError(`rpm header tag ${tag} runs past its data`);
      return view.getInt32(at);
    },
  };
}
