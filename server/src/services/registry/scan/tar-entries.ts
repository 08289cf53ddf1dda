import { ByteReader } from "./byte-reader.js";

/** One member of a tar archive, with its content when the caller asked for it. */
export interface TarEntry {
  /** The path, without a leading `./` or `/`. */
  readonly path: string;
  readonly type: "file" | "directory" | "symlink" | "hardlink" | "other";
  /** The target of a symbolic or hard link. */
  readonly linkName: string;
  readonly size: number;
  /** The bytes of a regular file that `want` selected. */
  readonly content?: Buffer;
}

export interface TarReadOptions {
  /** Whether to keep a regular file's content; everything else is skipped as it streams by. */
  readonly want: (path: string) => boolean;
  /** Largest content kept for one entry; a bigger wanted file is an error rather than a memory spike. */
  readonly maxEntryBytes: number;
}

export class TarFormatError extends Error {}

const BLOCK = 512;
/** Pax and GNU long-name headers are small; one this large is not a real archive. */
const MAX_META_BYTES = 1024 * 1024;

/**
 * Reads a tar stream (ustar, pax extended headers, GNU long names) entry by entry, without
 * holding the archive: only the headers and the content of wanted files are kept.
 */
export async function* readTarEntries(
  source: AsyncIterable<Uint8Array>,
  options: TarReadOptions,
): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source);
  try {
    let longName: string | undefined;
    let longLink: string | undefined;
    let pax: Map<string, string> = new Map();
    let globalPax: Map<string, string> = new Map();
    for (;;) {
      const header = await reader.read(BLOCK);
      if (header.length === 0) return;
      if (header.length < BLOCK) throw new TarFormatError("the archive ends inside a header");
      if (header.every((b) => b === 0)) return; // the end-of-archive blocks
      checkChecksum(header);
      const typeFlag = String.fromCharCode(header[156]!);
      const paxSize = pax.get("size") ?? globalPax.get("size");
      const size = paxSize !== undefined ? Number(paxSize) : readNumber(header.subarray(124, 136));
      if (!Number.isSafeInteger(size) || size < 0) throw new TarFormatError("an entry has an invalid size");
      const padded = Math.ceil(size / BLOCK) * BLOCK;

      if (typeFlag === "x" || typeFlag === "g" || typeFlag === "L" || typeFlag === "K") {
        if (size > MAX_META_BYTES) throw new TarFormatError("an extended header is too large");
        const body = await readExactly(reader, size);
        await reader.skip(padded - size);
        if (typeFlag === "x") pax = parsePax(body);
        else if (typeFlag === "g") globalPax = new Map([...globalPax, ...parsePax(body)]);
        else if (typeFlag === "L") longName = cString(body);
        else longLink = cString(body);
        continue;
      }

      const name =
        pax.get("path") ??
        longName ??
        joinUstarName(cString(header.subarray(345, 500)), cString(header.subarray(0, 100)));
      const linkName = pax.get("linkpath") ?? longLink ?? cString(header.subarray(157, 257));
      pax = new Map();
      longName = undefined;
      longLink = undefined;
      const path = cleanPath(name);
      const type = entryType(typeFlag);
      let content: Buffer | undefined;
      if (type === "file" && options.want(path)) {
        if (size > options.maxEntryBytes)
          throw new TarFormatError(`${path} is larger than ${options.maxEntryBytes} bytes`);
        content = await readExactly(reader, size);
        await reader.skip(padded - size);
      } else if ((await reader.skip(padded)) < size) {
        // Short only in the last entry's padding is tolerated: some image builders end layers there.
        throw new TarFormatError("the archive ends inside an entry");
      }
      yield { path, type, linkName, size, ...(content ? { content } : {}) };
    }
  } finally {
    await reader.close();
  }
}

async function readExactly(reader: ByteReader, size: number): Promise<Buffer> {
  const bytes = await reader.read(size);
  if (bytes.length < size) throw new TarFormatError("the archive ends inside an entry");
  return bytes;
}

function entryType(flag: string): TarEntry["type"] {
  if (flag === "0" || flag === "\0" || flag === "7") return "file";
  if (flag === "5") return "directory";
  if (flag === "2") return "symlink";
  if (flag === "1") return "hardlink";
  return "other";
}

/** Strips `./` and `/` at the start and a trailing `/`, so paths compare as the image sees them. */
export function cleanPath(path: string): string {
  return path
    .split("/")
    .filter((part) => part !== "" && part !== ".")
    .join("/");
}

function joinUstarName(prefix: string, name: string): string {
  return prefix ? `${prefix}/${name}` : name;
}

function cString(bytes: Uint8Array): string {
  const end = bytes.indexOf(0);
  return Buffer.from(end < 0 ? bytes : bytes.subarray(0, end)).toString("utf8");
}

/** An octal field, or GNU's base-256 form (high bit set) for sizes past 8 GiB. */
function readNumber(field: Uint8Array): number {
  if (field[0]! & 0x80) {
    let value = field[0]! & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const text = cString(field).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarFormatError("a header holds a field that is not octal");
  return parseInt(text, 8);
}

function checkChecksum(header: Buffer): void {
  const stored = readNumber(header.subarray(148, 156));
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
  if (sum !== stored) throw new TarFormatError("a header's checksum does not match (not a tar archive?)");
}

/** Pax records: `<length> <key>=<value>\n`, the length counting the whole record. */
function parsePax(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    if (space < 0) break;
    const length = Number(body.subarray(offset, space).toString("ascii"));
    if (!Number.isSafeInteger(length) || length <= 0 || offset + length > body.length)
      throw new TarFormatError("a pax header is malformed");
    const record = body.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (equals > 0) records.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return records;
}
