/**
 * The percent-encoding rules of `google/api/http.proto`, in both directions.
 *
 * The spec is asymmetric on purpose: a single-segment variable carries `/` as `%2F` and gets it back,
 * while a multi-segment variable uses `/` as its separator and leaves `%2F` as written, so a server can
 * still tell a separator from an escaped slash. Transcoders that decode everything (grpc-gateway's
 * default "legacy" mode) lose that distinction; we follow the spec.
 *
 * The decoders return `undefined` for malformed input (`%zz`, a truncated `%4`, bytes that are not
 * UTF-8) so the matcher can answer 400 instead of throwing on a hot path.
 */

/** RFC 3986 unreserved characters: the only ones a path variable leaves unescaped. */
export function isUnreservedCharCode(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || // a-z
    (code >= 0x41 && code <= 0x5a) || // A-Z
    (code >= 0x30 && code <= 0x39) || // 0-9
    code === 0x2d || // -
    code === 0x2e || // .
    code === 0x5f || // _
    code === 0x7e // ~
  );
}

/**
 * Encodes one value for a path segment: everything except unreserved characters becomes `%XX` of its
 * UTF-8 bytes. `encodeURIComponent` leaves `!'()*` alone, which the spec does not allow.
 *
 * @throws URIError for strings that are not well-formed UTF-16 (a lone surrogate).
 */
export function encodePathSegment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Decodes a segment captured by a single-segment variable: every escape, `%2F` included. */
export function decodePathSegment(raw: string): string | undefined {
  if (!raw.includes("%")) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * Decodes a segment captured by a multi-segment variable: every escape except `%2F`/`%2f`, which stays
 * exactly as the client wrote it.
 */
export function decodePathSegmentKeepingSlash(raw: string): string | undefined {
  let percent = raw.indexOf("%");
  if (percent === -1) return raw;
  let decoded = "";
  let from = 0;
  try {
    for (; percent !== -1; percent = raw.indexOf("%", percent + 1)) {
      if (isEscapedSlash(raw, percent)) {
        decoded += decodeURIComponent(raw.slice(from, percent)) + raw.slice(percent, percent + 3);
        from = percent + 3;
      }
    }
    return decoded + decodeURIComponent(raw.slice(from));
  } catch {
    return undefined;
  }
}

function isEscapedSlash(raw: string, percent: number): boolean {
  return raw.charCodeAt(percent + 1) === 0x32 && (raw.charCodeAt(percent + 2) | 0x20) === 0x66; // "2", "f"/"F"
}

/**
 * Normalises a request segment for comparison with a template literal: escapes of unreserved
 * characters are decoded (`%76%31` is `v1`, RFC 3986 §6.2.2.2 says they are equivalent), every other
 * escape is kept. Template literals never contain `%`, so a kept escape simply fails to match, which is
 * right: `%2F` is not the same segment as a literal `/` could ever be.
 */
export function normalizeUnreservedEscapes(raw: string): string {
  let percent = raw.indexOf("%");
  if (percent === -1) return raw;
  let normalized = "";
  let from = 0;
  for (; percent !== -1; percent = raw.indexOf("%", percent + 1)) {
    const code = hexByte(raw, percent + 1);
    if (code !== undefined && isUnreservedCharCode(code)) {
      normalized += raw.slice(from, percent) + String.fromCharCode(code);
      from = percent + 3;
    }
  }
  return normalized + raw.slice(from);
}

function hexByte(raw: string, at: number): number | undefined {
  const high = hexDigit(raw.charCodeAt(at));
  const low = hexDigit(raw.charCodeAt(at + 1));
  return high === undefined || low === undefined ? undefined : high * 16 + low;
}

function hexDigit(code: number): number | undefined {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return undefined;
}
