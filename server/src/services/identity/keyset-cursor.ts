import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The opaque `nextCursor` of the admin API's keyset-paginated lists: the sort keys of the last row
 * served, with the list's name, as base64url JSON. A cursor of another list, or one this server did
 * not write, is INVALID_ARGUMENT naming `cursor`, never a database error.
 */
export function encodeCursor(list: string, keys: readonly string[]): string {
  return Buffer.from(JSON.stringify([list, ...keys]), "utf8").toString("base64url");
}

export function decodeCursor(list: string, cursor: string, keyCount: number): string[] {
  let decoded: unknown;
  try {
    decoded = /^[A-Za-z0-9_-]+$/.test(cursor)
      ? JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
      : undefined;
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== keyCount + 1 ||
    decoded[0] !== list ||
    !decoded.every((key) => typeof key === "string")
  ) {
    throw new ConnectError(`cursor is not a cursor from a previous ${list} page`, Code.InvalidArgument);
  }
  return decoded.slice(1) as string[];
}

/**
 * Cuts the `limit + 1` rows a list query read (one more than a page, to learn whether another
 * page follows) into the page and, when more follow, the cursor after its last row.
 */
export function keysetPage<Row>(
  list: string,
  rows: readonly Row[],
  limit: number,
  keysOf: (row: Row) => readonly string[],
): { page: Row[]; nextCursor?: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return rows.length > limit && last !== undefined ? { page, nextCursor: encodeCursor(list, keysOf(last)) } : { page };
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/** The page size: the default when absent, INVALID_ARGUMENT outside 1..500. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new ConnectError(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${limit}`, Code.InvalidArgument);
  }
  return limit;
}
