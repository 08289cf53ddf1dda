import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { buildTar } from "./build-tar.js";
import { readTarEntries, TarFormatError, type TarEntry } from "./tar-entries.js";

/** Feeds `bytes` in chunks of `size`, as a network stream would, to cross every header boundary. */
async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function entries(bytes: Buffer, want: (path: string) => boolean, chunkSize = 7): Promise<TarEntry[]> {
  const result: TarEntry[] = [];
  for await (const entry of readTarEntries(chunks(bytes, chunkSize), { want, maxEntryBytes: 1 << 20 }))
    result.push(entry);
  return result;
}

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("tar entries", () => {
  it("lists every entry and keeps only the content of wanted files", async () => {
    const archive = buildTar([
      { path: "./etc/", type: "directory" },
      { path: "./etc/os-release", content: "ID=debian\n" },
      { path: "usr/bin/big", content: "x".repeat(1500) },
      { path: "etc/alternatives/awk", type: "symlink", linkName: "/usr/bin/mawk" },
    ]);
    const found = await entries(archive, (path) => path === "etc/os-release");
    expect(found.map((e) => [e.path, e.type, e.size, e.content?.toString()])).toEqual([
      ["etc", "directory", 0, undefined],
      ["etc/os-release", "file", 10, "ID=debian\n"],
      ["usr/bin/big", "file", 1500, undefined],
      ["etc/alternatives/awk", "symlink", 0, undefined],
    ]);
    expect(found[3]!.linkName).toBe("/usr/bin/mawk");
  });

  it("reads what GNU tar writes in pax format, with long names and symbolic links", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tar-entries-"));
    dirs.push(dir);
    const deep = join(dir, "root", "a".repeat(90), "b".repeat(90));
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, "status"), "Package: long\n");
    await symlink("../usr/lib/os-release", join(dir, "root", "os-release"));
    for (const format of ["pax", "gnu"]) {
      const file = join(dir, `layer-${format}.tar`);
      await promisify(execFile)("tar", [`--format=${format}`, "-cf", file, "-C", join(dir, "root"), "."]);
      const found = await entries(await readFile(file), (path) => path.endsWith("/status"), 4096);
      const status = found.find((e) => e.path.endsWith("/status"));
      expect(status?.path).toBe(`${"a".repeat(90)}/${"b".repeat(90)}/status`);
      expect(status?.content?.toString()).toBe("Package: long\n");
      expect(found.find((e) => e.path === "os-release")).toMatchObject({
        type: "symlink",
        linkName: "../usr/lib/os-release",
      });
    }
  });

  it("refuses what is not a tar archive and a wanted file past the limit", async () => {
    await expect(entries(Buffer.alloc(512, 1), () => true)).rejects.toThrow(TarFormatError);
    const archive = buildTar([{ path: "f", content: "0123456789" }]);
    const read = async () => {
      for await (const _ of readTarEntries(chunks(archive, 100), { want: () => true, maxEntryBytes: 5 })) void _;
    };
    await expect(read()).rejects.toThrow("larger than 5 bytes");
    await expect(entries(archive.subarray(0, 515), () => true)).rejects.toThrow("ends inside an entry");
  });

  it("accepts an archive that ends in its last entry's padding, without the end blocks", async () => {
    const archive = buildTar([
      { path: "etc/os-release", content: "ID=debian\n" },
      { path: "app/server.js", content: "x" },
    ]);
    // Header, content and padding of the first entry, the second's header and its one byte of content.
    const cut = archive.subarray(0, 512 + 512 + 512 + 1);
    const found = await entries(cut, (path) => path === "etc/os-release");
    expect(found.map((e) => e.path)).toEqual(["etc/os-release", "app/server.js"]);
    await expect(entries(archive.subarray(0, 512 + 512 + 512), () => false)).rejects.toThrow("ends inside an entry");
  });
});
