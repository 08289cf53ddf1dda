import { describe, expect, it } from "vitest";
import { fromStoredJson, toStoredJson } from "./stored-json.js";

const roundTrip = (value: unknown) => fromStoredJson(JSON.parse(toStoredJson(value)));

describe("stored JSON", () => {
  it("stores a document without NUL as its JSON text", () => {
    for (const value of [
      { a: 1, b: ["x", null, true] },
      "plain",
      12.5,
      [],
      { text: "a\\u0000b" },
      { "\u0001nul": 1, other: 2 },
      "\u0001",
    ]) {
      expect(toStoredJson(value)).toBe(JSON.stringify(value));
      expect(roundTrip(value)).toEqual(value);
    }
  });

  it("stores a document holding NUL with no NUL left in its text, and reads it back", () => {
    const value = {
      "k\u0000ey": ["x\u0000y", "\u0000", "\u0001", "\u00010", "\u0000\u0001\u00011"],
      nested: { deep: "end\u0000" },
      n: 1,
      none: null,
    };
    const stored = toStoredJson(value);
    expect(stored).not.toContain("\\u0000");
    expect(roundTrip(value)).toEqual(value);
    expect(roundTrip("x\u0000y")).toBe("x\u0000y");
  });

  it("wraps a document that looks like the envelope, so it reads back as itself", () => {
    const lookalike = { "\u0001nul": "\u00010" };
    expect(toStoredJson(lookalike)).not.toBe(JSON.stringify(lookalike));
    expect(roundTrip(lookalike)).toEqual(lookalike);
    expect(roundTrip({ "\u0001nul": { "\u0001nul": "x\u0000" } })).toEqual({ "\u0001nul": { "\u0001nul": "x\u0000" } });
  });

  it("keeps a __proto__ key a key", () => {
    const value = JSON.parse('{"__proto__": {"polluted": "x\\u0000"}}') as Record<string, unknown>;
    const back = roundTrip(value) as Record<string, unknown>;
    expect(Object.keys(back)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads documents stored before the envelope existed as they are", () => {
    expect(fromStoredJson({ a: "\u0001x" })).toEqual({ a: "\u0001x" });
    expect(fromStoredJson(null)).toBeNull();
    expect(fromStoredJson("123")).toBe("123");
  });
});

it("stores undefined, which JSON cannot spell, as null", () => {
  expect(toStoredJson(undefined)).toBe("null");
});
