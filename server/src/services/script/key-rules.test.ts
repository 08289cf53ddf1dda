import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  checkDeletions,
  checkEntries,
  checkKey,
  checkScriptName,
  checkValue,
  isValidKey,
  MAX_VALUE_BYTES,
} from "./key-rules.js";

/** The INVALID_ARGUMENT message `check` throws. */
function invalidArgument(check: () => void): string {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    return (error as ConnectError).rawMessage;
  }
  throw new Error("expected INVALID_ARGUMENT, nothing was thrown");
}

describe("key rule", () => {
  it.each(["A", "_", "_1", "PATH", "api_key_2", "a".repeat(256), "__proto__"])("accepts %j", (key) => {
    expect(isValidKey(key)).toBe(true);
  });

  it.each(["", "1abc", "9", "x y", "a-b", "a.b", "é", "K=V", "a".repeat(257), "A\0"])("refuses %j", (key) => {
    expect(isValidKey(key)).toBe(false);
  });

  it("names the field and the key", () => {
    expect(invalidArgument(() => checkKey("key", ""))).toBe("key is required");
    expect(invalidArgument(() => checkKey("key", "1abc"))).toMatch(/^key: "1abc" is not a valid variable name/);
    expect(invalidArgument(() => checkKey("delete[0]", "x y"))).toMatch(
      /^delete\[0\]: "x y" is not a valid variable name/,
    );
  });

  it("cuts a huge key short in the message", () => {
    const message = invalidArgument(() => checkKey("key", "-".repeat(10_000)));
    expect(message.length).toBeLessThan(200);
  });
});

describe("value rule", () => {
  it("allows exactly 64 KiB of UTF-8 and refuses one byte more", () => {
    expect(() => checkValue("value", "x".repeat(MAX_VALUE_BYTES), "required")).not.toThrow();
    expect(invalidArgument(() => checkValue("value", "x".repeat(MAX_VALUE_BYTES + 1), "required"))).toMatch(
      /^value is 65537 bytes/,
    );
  });

  it("counts bytes, not characters", () => {
    // "é" is two bytes of UTF-8: 32,769 of them are 65,538 bytes.
    expect(() => checkValue("value", "é".repeat(MAX_VALUE_BYTES / 2), "required")).not.toThrow();
    expect(invalidArgument(() => checkValue("value", "é".repeat(MAX_VALUE_BYTES / 2 + 1), "required"))).toMatch(
      /^value is 65538 bytes/,
    );
  });

  it("requires a tenant value and allows an empty overlay value", () => {
    expect(invalidArgument(() => checkValue("value", "", "required"))).toBe("value is required");
    expect(() => checkValue('set["A"]', "", "allowed")).not.toThrow();
  });

  it("refuses a NUL character", () => {
    expect(invalidArgument(() => checkValue("value", "a\0b", "allowed"))).toMatch(/^value contains a NUL character/);
  });
});

describe("map entries and deletions", () => {
  it("names the map entry of a bad key or value", () => {
    expect(invalidArgument(() => checkEntries("vars", { OK: "1", "1abc": "2" }, "required"))).toMatch(
      /^vars\["1abc"\] is not a valid variable name/,
    );
    expect(invalidArgument(() => checkEntries("set", { "x y": "" }, "allowed"))).toMatch(
      /^set\["x y"\] is not a valid variable name/,
    );
    expect(invalidArgument(() => checkEntries("vars", { A: "" }, "required"))).toBe('vars["A"] is required');
    expect(invalidArgument(() => checkEntries("set", { A: "x".repeat(MAX_VALUE_BYTES + 1) }, "allowed"))).toMatch(
      /^set\["A"\] is 65537 bytes/,
    );
  });

  it("refuses a bad key in delete and a key both set and deleted", () => {
    expect(invalidArgument(() => checkDeletions(["A", ""], {}))).toBe("delete[1] is required");
    expect(invalidArgument(() => checkDeletions(["1abc"], {}))).toMatch(
      /^delete\[0\]: "1abc" is not a valid variable name/,
    );
    expect(invalidArgument(() => checkDeletions(["A", "B"], { B: "" }))).toBe(
      'delete[1]: "B" is also in set; a key cannot be both set and deleted',
    );
    expect(() => checkDeletions(["A", "toString"], { B: "" })).not.toThrow();
  });

  it("requires a script name", () => {
    expect(invalidArgument(() => checkScriptName("name", ""))).toBe("name is required");
    expect(() => checkScriptName("name", "etl-nightly")).not.toThrow();
    expect(() => checkScriptName("name", "v1.2_daily-run")).not.toThrow();
    expect(invalidArgument(() => checkScriptName("name", "a b"))).toBe(
      'name: "a b" is not a script name (letters, digits, "-", "_" and ".", 1 to 128 characters)',
    );
    expect(invalidArgument(() => checkScriptName("name", "x".repeat(129)))).toMatch(/is not a script name/);
  });
});
