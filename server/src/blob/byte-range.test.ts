import { describe, expect, it } from "vitest";
import { parseByteRange } from "./byte-range.js";

describe("parseByteRange", () => {
  it("reads one range in each of its three forms, clamped to the content", () => {
    expect(parseByteRange("bytes=0-4", 10)).toEqual({ kind: "range", start: 0, end: 4 });
    expect(parseByteRange("bytes=5-", 10)).toEqual({ kind: "range", start: 5, end: 9 });
    expect(parseByteRange("bytes=-3", 10)).toEqual({ kind: "range", start: 7, end: 9 });
    expect(parseByteRange("bytes=-30", 10)).toEqual({ kind: "range", start: 0, end: 9 });
    expect(parseByteRange("bytes=8-100", 10)).toEqual({ kind: "range", start: 8, end: 9 });
    expect(parseByteRange(" Bytes = 1 - 2 ", 10)).toEqual({ kind: "range", start: 1, end: 2 });
  });

  it("answers unsatisfiable for a range past the end, an empty suffix, or any range of empty content", () => {
    expect(parseByteRange("bytes=10-", 10)).toEqual({ kind: "unsatisfiable" });
    expect(parseByteRange("bytes=12-20", 10)).toEqual({ kind: "unsatisfiable" });
    expect(parseByteRange("bytes=-0", 10)).toEqual({ kind: "unsatisfiable" });
    expect(parseByteRange("bytes=0-", 0)).toEqual({ kind: "unsatisfiable" });
    expect(parseByteRange("bytes=-5", 0)).toEqual({ kind: "unsatisfiable" });
  });

  it("ignores what it does not honour: no header, bad syntax, other units, several ranges", () => {
    for (const header of [
      undefined,
      "",
      "bytes=",
      "bytes=-",
      "bytes=5-2",
      "bytes=a-b",
      "items=0-1",
      "bytes=0-1,3-4",
      "bytes=0-1 junk",
    ]) {
      expect(parseByteRange(header, 10), String(header)).toEqual({ kind: "whole" });
    }
  });
});
