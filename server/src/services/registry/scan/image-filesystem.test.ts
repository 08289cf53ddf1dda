import { describe, expect, it } from "vitest";
import { ImageFilesystem } from "./image-filesystem.js";
import type { TarEntry } from "./tar-entries.js";

async function* layer(entries: Partial<TarEntry>[]): AsyncGenerator<TarEntry> {
  for (const e of entries) {
    yield { type: "file", linkName: "", size: e.content?.length ?? 0, path: "", ...e } as TarEntry;
  }
}
const file = (path: string, text: string): Partial<TarEntry> => ({ path, content: Buffer.from(text) });

describe("image filesystem", () => {
  const wanted = (path: string) => path.startsWith("db/") || path === "etc/os-release" || path === "usr/lib/os-release";

  it("applies whiteouts and opaque folders to lower layers only", async () => {
    const fs = new ImageFilesystem(wanted);
    await fs.applyLayer(layer([file("db/a", "1"), file("db/b", "1"), file("db/sub/c", "1"), file("other", "x")]));
    expect(fs.read("other")).toBeUndefined();
    await fs.applyLayer(layer([file("db/a", "2"), { path: "db/.wh.b" }]));
    expect([fs.read("db/a")?.toString(), fs.read("db/b")]).toEqual(["2", undefined]);
    await fs.applyLayer(layer([file("db/new", "3"), { path: "db/.wh..wh..opq" }]));
    expect([fs.read("db/a"), fs.read("db/sub/c"), fs.read("db/new")?.toString()]).toEqual([undefined, undefined, "3"]);
    await fs.applyLayer(layer([{ path: ".wh.db" }]));
    expect(fs.list("db")).toEqual([]);
  });

  it("follows symbolic links among kept files and lets a file hide a folder", async () => {
    const fs = new ImageFilesystem(wanted);
    await fs.applyLayer(
      layer([
        { path: "etc/os-release", type: "symlink", linkName: "../usr/lib/os-release" },
        file("usr/lib/os-release", "ID=debian"),
        file("db/x/y", "1"),
      ]),
    );
    expect(fs.read("etc/os-release")?.toString()).toBe("ID=debian");
    await fs.applyLayer(layer([{ path: "db/x", type: "symlink", linkName: "/elsewhere" }]));
    expect(fs.read("db/x/y")).toBeUndefined();
  });
});
