import type { ByteRange } from "./blob-store.js";

/**
 * What a `Range` header asks of a representation of `size` bytes (RFC 9110 §14): nothing to honour
 * (absent, malformed, another unit, or several ranges: the whole content is sent, as the RFC lets a
 * server do), one satisfiable range (206), or a range that starts past the end (416).
 * Not `range-parser`: it answers 416 to a suffix longer than the content, which RFC 9110 §14.1.3
 * serves whole, and to an inverted range, which §14.1.1 makes invalid and so ignored.
 */
export type RangeRequest =
  { readonly kind: "whole" } | { readonly kind: "unsatisfiable" } | ({ readonly kind: "range" } & ByteRange);

export function parseByteRange(header: string | undefined, size: number): RangeRequest {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header ?? "");
  if (!match) return { kind: "whole" };
  const [, first = "", last = ""] = match;
  if (first === "" && last === "") return { kind: "whole" };
  if (first === "") {
    // `-N`: the last N bytes.
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "range", start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  // `M-N` with N before M is not a range at all: ignored like any malformed header.
  if (last !== "" && Number(last) < start) return { kind: "whole" };
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "range", start, end: last === "" ? size - 1 : Math.min(Number(last), size - 1) };
}
