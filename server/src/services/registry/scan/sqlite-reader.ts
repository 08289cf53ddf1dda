/**
 * Reads the rows of one table of an SQLite database file, as bytes: enough of the file format
 * (https://www.sqlite.org/fileformat2.html) to list a table that an image keeps its package
 * database in, without a native SQLite library. Table b-trees only (no index is needed to read
 * every row), overflow pages, and the write-ahead log when one lies beside the file.
 */

export class SqliteFormatError extends Error {}

/** One column's value: SQLite's storage classes, with integers as numbers (exact up to 2^53). */
export type SqliteValue = null | number | string | Uint8Array;

const MAGIC = "SQLite format 3\0";
const WAL_MAGIC_LITTLE_ENDIAN = 0x377f0682;
const WAL_MAGIC_BIG_ENDIAN = 0x377f0683;
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;
const PAGE_LEAF_TABLE = 13;
const PAGE_INTERIOR_TABLE = 5;

/**
 * The rows of `table`, each as its columns in order (an INTEGER PRIMARY KEY column reads as
 * null: SQLite keeps it as the row id). `wal` is the `-wal` file, applied up to its last valid
 * commit as SQLite would. A file this reader cannot follow is a SqliteFormatError.
 */
export function readSqliteTable(file: Uint8Array, table: string, wal?: Uint8Array): SqliteValue[][] {
  const database = openDatabase(file, wal);
  const schema = readTableRows(database, 1);
  // sqlite_schema: type, name, tbl_name, rootpage, sql.
  const entry = schema.find((row) => row[0] === "table" && row[1] === table);
  if (!entry) throw new SqliteFormatError(`the database has no table ${table}`);
  const root = entry[3];
  if (typeof root !== "number" || root < 1) throw new SqliteFormatError(`table ${table} has no root page`);
  return readTableRows(database, root);
}

interface Database {
  readonly pageSize: number;
  /** Page size less the bytes reserved at the end of each page. */
  readonly usableSize: number;
  readonly textDecoder: TextDecoder;
  /** No record can be longer than the files' bytes: a larger size is a broken file. */
  readonly maxPayloadBytes: number;
  page(number: number): Uint8Array;
}

function openDatabase(file: Uint8Array, wal: Uint8Array | undefined): Database {
  if (file.length < 100 || new TextDecoder("latin1").decode(file.subarray(0, 16)) !== MAGIC)
    throw new SqliteFormatError("the file is not an SQLite database");
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const rawPageSize = view.getUint16(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0)
    throw new SqliteFormatError(`the page size ${pageSize} is not valid`);
  const usableSize = pageSize - file[20]!;
  if (usableSize < 480) throw new SqliteFormatError("the reserved space leaves pages too small");
  const encoding = view.getUint32(56);
  const textDecoder = new TextDecoder(encoding === 2 ? "utf-16le" : encoding === 3 ? "utf-16be" : "utf-8");
  const logged = wal && wal.length > 0 ? committedWalPages(wal, pageSize) : new Map<number, Uint8Array>();
  return {
    pageSize,
    usableSize,
    textDecoder,
    maxPayloadBytes: file.length + (wal?.length ?? 0),
    page(number) {
      const fromLog = logged.get(number);
      if (fromLog) return fromLog;
      const start = (number - 1) * pageSize;
      if (number < 1 || start + pageSize > file.length)
        throw new SqliteFormatError(`page ${number} is outside the file`);
      return file.subarray(start, start + pageSize);
    },
  };
}

/**
 * The pages the write-ahead log holds, each at its last version in a committed transaction:
 * frames count while their salts match the log's header and their running checksum holds; the
 * frames after the last commit frame among them are ignored, as SQLite ignores them.
 */
function committedWalPages(wal: Uint8Array, pageSize: number): Map<number, Uint8Array> {
  const pages = new Map<number, Uint8Array>();
  if (wal.length < WAL_HEADER_BYTES) return pages;
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = view.getUint32(0);
  if (magic !== WAL_MAGIC_LITTLE_ENDIAN && magic !== WAL_MAGIC_BIG_ENDIAN)
    throw new SqliteFormatError("the write-ahead log is not one of SQLite");
  if (view.getUint32(8) !== pageSize) return pages;
  const bigEndian = magic === WAL_MAGIC_BIG_ENDIAN;
  const salt1 = view.getUint32(16);
  const salt2 = view.getUint32(20);
  let sums = walChecksum(view, 0, 24, [0, 0], bigEndian);
  if (sums[0] !== view.getUint32(24) || sums[1] !== view.getUint32(28)) return pages;
  const pending = new Map<number, Uint8Array>();
  const frameBytes = WAL_FRAME_HEADER_BYTES + pageSize;
  for (let at = WAL_HEADER_BYTES; at + frameBytes <= wal.length; at += frameBytes) {
    if (view.getUint32(at + 8) !== salt1 || view.getUint32(at + 12) !== salt2) break;
    sums = walChecksum(view, at, 8, sums, bigEndian);
    sums = walChecksum(view, at + WAL_FRAME_HEADER_BYTES, pageSize, sums, bigEndian);
    if (sums[0] !== view.getUint32(at + 16) || sums[1] !== view.getUint32(at + 20)) break;
    pending.set(view.getUint32(at), wal.subarray(at + WAL_FRAME_HEADER_BYTES, at + frameBytes));
    if (view.getUint32(at + 4) !== 0) {
      // A commit frame: everything up to here is the database.
      for (const [number, page] of pending) pages.set(number, page);
      pending.clear();
    }
  }
  return pages;
}

/** SQLite's running checksum over `length` bytes (a multiple of 8), continuing `[s0, s1]`. */
function walChecksum(
  view: DataView,
  start: number,
  length: number,
  [s0, s1]: readonly [number, number],
  bigEndian: boolean,
): [number, number] {
  let a = s0;
  let b = s1;
  for (let i = start; i < start + length; i += 8) {
    a = (a + view.getUint32(i, !bigEndian) + b) >>> 0;
    b = (b + view.getUint32(i + 4, !bigEndian) + a) >>> 0;
  }
  return [a, b];
}

/** Every row of the table b-tree rooted at `root`, in row id order. */
function readTableRows(database: Database, root: number): SqliteValue[][] {
  const rows: SqliteValue[][] = [];
  // A page met twice is a cycle or a shared subtree: a broken file, however deep it goes.
  const visited = new Set<number>();
  const visit = (number: number) => {
    if (visited.has(number)) throw new SqliteFormatError(`page ${number} appears twice in one b-tree`);
    visited.add(number);
    const page = database.page(number);
    const headerAt = number === 1 ? 100 : 0;
    const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
    const type = page[headerAt];
    const cells = view.getUint16(headerAt + 3);
    const pointersAt = headerAt + (type === PAGE_INTERIOR_TABLE ? 12 : 8);
    if (pointersAt + 2 * cells > page.length) throw new SqliteFormatError(`page ${number} has more cells than room`);
    if (type === PAGE_INTERIOR_TABLE) {
      for (let i = 0; i < cells; i++) {
        const cellAt = view.getUint16(pointersAt + 2 * i);
        if (cellAt + 4 > page.length) throw new SqliteFormatError("a cell lies outside its page");
        visit(view.getUint32(cellAt));
      }
      visit(view.getUint32(headerAt + 8));
    } else if (type === PAGE_LEAF_TABLE) {
      for (let i = 0; i < cells; i++) rows.push(readLeafCell(database, page, view.getUint16(pointersAt + 2 * i)));
    } else {
      throw new SqliteFormatError(`page ${number} is not a table b-tree page (type ${type})`);
    }
  };
  visit(root);
  return rows;
}

/** A table leaf cell: payload size, row id, the payload's local part, then its overflow pages. */
function readLeafCell(database: Database, page: Uint8Array, cellAt: number): SqliteValue[] {
  const cursor = { at: cellAt };
  const payloadSize = readVarint(page, cursor);
  if (payloadSize > database.maxPayloadBytes) throw new SqliteFormatError("a record is longer than the file");
  readVarint(page, cursor); // the row id
  const { usableSize } = database;
  const maxLocal = usableSize - 35;
  let local = payloadSize;
  if (payloadSize > maxLocal) {
    const minLocal = Math.floor(((usableSize - 12) * 32) / 255) - 23;
    const spill = minLocal + ((payloadSize - minLocal) % (usableSize - 4));
    local = spill <= maxLocal ? spill : minLocal;
  }
  if (cursor.at + local > page.length) throw new SqliteFormatError("a cell lies outside its page");
  const payload = new Uint8Array(payloadSize);
  payload.set(page.subarray(cursor.at, cursor.at + local));
  let filled = local;
  if (filled < payloadSize) {
    if (cursor.at + local + 4 > page.length) throw new SqliteFormatError("a cell lies outside its page");
    let next = new DataView(page.buffer, page.byteOffset).getUint32(cursor.at + local);
    const seen = new Set<number>();
    while (filled < payloadSize) {
      if (next === 0 || seen.has(next)) throw new SqliteFormatError("an overflow chain ends early or loops");
      seen.add(next);
      const overflow = database.page(next);
      const take = Math.min(usableSize - 4, payloadSize - filled);
      payload.set(overflow.subarray(4, 4 + take), filled);
      filled += take;
      next = new DataView(overflow.buffer, overflow.byteOffset).getUint32(0);
    }
  }
  return decodeRecord(payload, database.textDecoder);
}

/** A record: a header of serial types (varints, the first its own length), then the values. */
function decodeRecord(payload: Uint8Array, textDecoder: TextDecoder): SqliteValue[] {
  const cursor = { at: 0 };
  const headerSize = readVarint(payload, cursor);
  if (headerSize > payload.length) throw new SqliteFormatError("a record's header is longer than the record");
  const types: number[] = [];
  while (cursor.at < headerSize) types.push(readVarint(payload, cursor));
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  let at = headerSize;
  const values: SqliteValue[] = [];
  for (const type of types) {
    const size = serialTypeSize(type);
    if (at + size > payload.length) throw new SqliteFormatError("a record's value runs past its end");
    values.push(decodeValue(type, view, payload.subarray(at, at + size), at, textDecoder));
    at += size;
  }
  return values;
}

const INTEGER_SIZES = [0, 1, 2, 3, 4, 6, 8];

function serialTypeSize(type: number): number {
  if (type <= 6) return INTEGER_SIZES[type]!;
  if (type === 7) return 8;
  if (type === 8 || type === 9) return 0;
  if (type >= 12) return Math.floor((type - 12) / 2);
  throw new SqliteFormatError(`serial type ${type} is reserved`);
}

function decodeValue(
  type: number,
  view: DataView,
  bytes: Uint8Array,
  at: number,
  textDecoder: TextDecoder,
): SqliteValue {
  if (type === 0) return null;
  if (type === 7) return view.getFloat64(at);
  if (type === 8) return 0;
  if (type === 9) return 1;
  if (type <= 6) {
    // Big-endian two's complement of 1 to 8 bytes.
    let value = bytes[0]! & 0x80 ? -1n : 0n;
    for (const byte of bytes) value = (value << 8n) | BigInt(byte);
    return Number(BigInt.asIntN(bytes.length * 8, value));
  }
  return type % 2 === 0 ? bytes : textDecoder.decode(bytes);
}

/** SQLite's varint: up to eight bytes of seven bits, big-endian, then a ninth of eight. */
function readVarint(bytes: Uint8Array, cursor: { at: number }): number {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    if (cursor.at >= bytes.length) throw new SqliteFormatError("a varint runs past its page");
    const byte = bytes[cursor.at++]!;
    if (i === 8) return value * 256 + byte;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return value;
}
