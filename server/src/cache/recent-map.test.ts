import { describe, expect, it } from "vitest";
import { RecentMap } from "./recent-map.js";

describe("RecentMap", () => {
  it("drops the least recently used entry past its capacity", () => {
    const map = new RecentMap<string, number>(2);
    map.set("a", 1);
    map.set("b", 2);
    expect(map.get("a")).toBe(1);
    map.set("c", 3);
    expect([map.get("a"), map.get("b"), map.get("c"), map.size]).toEqual([1, undefined, 3, 2]);
  });

  it("builds a missing value once, and keeps nothing when the build throws", () => {
    const map = new RecentMap<string, number>(4);
    let builds = 0;
    const build = () => ++builds;
    expect([map.getOrBuild("x", build), map.getOrBuild("x", build)]).toEqual([1, 1]);
    expect(() =>
      map.getOrBuild("y", () => {
        throw new Error("bad");
      }),
    ).toThrow("bad");
    expect(map.size).toBe(1);
  });
});
