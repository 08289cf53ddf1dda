import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Keyset pagination by one sort key (a name): the token is the last key served, base64url, with
 * the list's name in front so a token of one list is refused by another. Opaque to clients; a
 * token this server did not write is INVALID_ARGUMENT, never a database error.
 */
export function encodePageToken(list: string, lastKey: string): string {
  return Buffer.from(`${list}:${lastKey}`, "utf8").toString("base64url");
}

/** The last key of the previous page, or "" for the first page. */
export function decodePageToken(list: string, token: string): string {
  if (token === "") return "";
  const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString("utf8") : "";
  if (!text.startsWith(`${list}:`) || text.length === list.length + 1) {
    throw new ConnectError(`page_token is not a token from a previous ${list} response`, Code.InvalidArgument);
  }
  return text.slice(list.length + 1);
}

/** The page size to use: the default for 0, the maximum for anything larger. */
export function pageSizeOf(requested: number, defaults: { readonly fallback: number; readonly max: number }): number {
  if (!Number.isInteger(requested) || requested < 0)
    throw new ConnectError(`page_size must be 0 or more, got ${requested}`, Code.InvalidArgument);
  return requested === 0 ? defaults.fallback : Math.min(requested, defaults.max);
}
