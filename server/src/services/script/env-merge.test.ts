import { describe, expect, it } from "vitest";
import { mergeEnvironment } from "./env-merge.js";

interface MergeCase {
  readonly case: string;
  readonly tenant: Record<string, string>;
  readonly overlay: Record<string, string>;
  readonly merged: Record<string, string>;
}

describe("mergeEnvironment", () => {
  it.each<MergeCase>([
    { case: "tenant only", tenant: { K: "t" }, overlay: {}, merged: { K: "t" } },
    { case: "non-empty overlay wins on a collision", tenant: { K: "t" }, overlay: { K: "o" }, merged: { K: "o" } },
    { case: "empty overlay defers to the tenant value", tenant: { K: "t" }, overlay: { K: "" }, merged: { K: "t" } },
    { case: "overlay-only key with a value is added", tenant: {}, overlay: { K: "o" }, merged: { K: "o" } },
    { case: "overlay-only key with an empty value is left out", tenant: {}, overlay: { K: "" }, merged: {} },
    { case: "empty tenant value, no overlay: kept as empty", tenant: { K: "" }, overlay: {}, merged: { K: "" } },
    {
      case: "empty tenant value, non-empty overlay: overlay wins",
      tenant: { K: "" },
      overlay: { K: "o" },
      merged: { K: "o" },
    },
    {
      case: "empty tenant value, empty overlay: tenant's empty value",
      tenant: { K: "" },
      overlay: { K: "" },
      merged: { K: "" },
    },
    { case: "both empty", tenant: {}, overlay: {}, merged: {} },
    { case: "whitespace is a non-empty value", tenant: { K: "t" }, overlay: { K: " " }, merged: { K: " " } },
    {
      case: "every rule at once",
      tenant: { A: "ta", B: "tb", C: "tc" },
      overlay: { B: "ob", C: "", D: "od", E: "" },
      merged: { A: "ta", B: "ob", C: "tc", D: "od" },
    },
  ])("$case", ({ tenant, overlay, merged }) => {
    expect(mergeEnvironment(tenant, overlay)).toStrictEqual(merged);
    expect(mergeEnvironment(new Map(Object.entries(tenant)), new Map(Object.entries(overlay)))).toStrictEqual(merged);
  });

  it("accepts a Map on one side and a record on the other", () => {
    expect(mergeEnvironment(new Map([["A", "t"]]), { A: "", B: "o" })).toStrictEqual({ A: "t", B: "o" });
    expect(mergeEnvironment({ A: "t" }, new Map([["A", "o"]]))).toStrictEqual({ A: "o" });
  });

  it("returns keys sorted by code point, whatever the input order", () => {
    const merged = mergeEnvironment(
      { b: "1", B: "2", _z: "3" },
      new Map([
        ["a1", "4"],
        ["A", "5"],
      ]),
    );
    expect(Object.keys(merged)).toEqual(["A", "B", "_z", "a1", "b"]);
  });

  it("treats __proto__ as an ordinary variable name", () => {
    const tenant = Object.fromEntries([["__proto__", "t"]]) as Record<string, string>;
    const merged = mergeEnvironment(tenant, new Map([["constructor", "o"]]));
    expect(Object.keys(merged)).toEqual(["__proto__", "constructor"]);
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(merged, "__proto__")?.value).toBe("t");
  });

  it("does not modify its inputs", () => {
    const tenant = { A: "t" };
    const overlay = new Map([
      ["A", "o"],
      ["B", ""],
    ]);
    mergeEnvironment(tenant, overlay);
    expect(tenant).toStrictEqual({ A: "t" });
    expect([...overlay]).toEqual([
      ["A", "o"],
      ["B", ""],
    ]);
  });
});
