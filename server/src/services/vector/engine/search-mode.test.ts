import { describe, expect, it } from "vitest";
import { resolveSearchMode, SearchMode } from "./search-mode.js";

describe("search mode by sparse mode", () => {
  it("follows the spec's table", () => {
    const mode = (requested: SearchMode, sparse: "none" | "bm25" | "external", text = true) =>
      resolveSearchMode(requested, sparse, text).mode;
    for (const sparse of ["none", "bm25", "external"] as const) {
      expect(mode(SearchMode.UNSPECIFIED, sparse)).toBe("vector");
      expect(mode(SearchMode.VECTOR, sparse)).toBe("vector");
    }
    expect(mode(SearchMode.HYBRID, "bm25")).toBe("hybrid");
    expect(mode(SearchMode.HYBRID, "external")).toBe("hybrid");
    expect(mode(SearchMode.AUTO, "none")).toBe("vector");
    expect(mode(SearchMode.AUTO, "bm25")).toBe("hybrid");
    expect(mode(SearchMode.AUTO, "external")).toBe("hybrid");
  });

  it("warns when HYBRID falls back to dense", () => {
    expect(resolveSearchMode(SearchMode.HYBRID, "none", true).warning).toContain("sparse mode NONE");
    expect(resolveSearchMode(SearchMode.HYBRID, "bm25", false)).toMatchObject({
      mode: "vector",
      warning: expect.stringContaining("query text"),
    });
    expect(resolveSearchMode(SearchMode.AUTO, "none", true).warning).toBeUndefined();
  });
});
