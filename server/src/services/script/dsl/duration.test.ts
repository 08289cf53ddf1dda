import { describe, expect, it } from "vitest";
import { DurationError, formatDuration, MAX_DURATION_MS, parseDuration } from "./duration.js";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h", 3_600_000],
    ["1h30m", 5_400_000],
    ["2d", 172_800_000],
    ["1d2h3m4s5ms", 93_784_005],
    ["0s", 0],
    ["90s", 90_000],
    ["365d", MAX_DURATION_MS],
  ])("reads %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ["", 'timeout: "" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (it is empty)'],
    [
      "30",
      'timeout: "30" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (a number needs a unit: ms, s, m, h or d)',
    ],
    [
      "1.5h",
      'timeout: "1.5h" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected "." at position 2)',
    ],
    [
      "-5s",
      'timeout: "-5s" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected "-" at position 1)',
    ],
    [
      "5 m",
      'timeout: "5 m" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected " " at position 2)',
    ],
    [
      "1h30",
      'timeout: "1h30" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (a number needs a unit: ms, s, m, h or d)',
    ],
    [
      "h",
      'timeout: "h" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected "h" at position 1)',
    ],
    [
      "30m1h",
      'timeout: "30m1h" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (units go from largest to smallest, each once: d, h, m, s, ms)',
    ],
    [
      "1h1h",
      'timeout: "1h1h" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (units go from largest to smallest, each once: d, h, m, s, ms)',
    ],
    [
      "5M",
      'timeout: "5M" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected "M" at position 2)',
    ],
    [
      "5w",
      'timeout: "5w" is not a duration such as "500ms", "30s", "5m", "1h30m" or "2d" (unexpected "w" at position 2)',
    ],
    ["366d", 'timeout: "366d" is longer than the limit of 365 days'],
    ["99999999999999999999d", 'timeout: "99999999999999999999d" is longer than the limit of 365 days'],
  ])("refuses %j naming the field and the input", (text, message) => {
    let error: unknown;
    try {
      parseDuration(text, "timeout");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DurationError);
    expect((error as DurationError).message).toBe(message);
    expect((error as DurationError).field).toBe("timeout");
    expect((error as DurationError).input).toBe(text);
  });

  it("cuts a long input short in the message", () => {
    expect(() => parseDuration("x".repeat(500))).toThrow(/^duration: "x{40}…" is not a duration/);
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0s"],
    [500, "500ms"],
    [5_400_000, "1h30m"],
    [93_784_005, "1d2h3m4s5ms"],
  ])("writes %d ms as %j, which parses back", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });

  it("refuses what is not a non-negative integer", () => {
    expect(() => formatDuration(-1)).toThrow(RangeError);
    expect(() => formatDuration(1.5)).toThrow(RangeError);
  });
});
