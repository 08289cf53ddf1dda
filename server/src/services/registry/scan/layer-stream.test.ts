import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { layerTarStream, UnsupportedLayerError } from "./layer-stream.js";

async function collect(bytes: Buffer): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  async function* source() {
    for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
  }
  for await (const chunk of layerTarStream(source())) parts.push(chunk);
  return Buffer.concat(parts);
}

describe("layer streams", () => {
  it("inflates gzip layers and passes uncompressed ones through", async () => {
    const tar = Buffer.alloc(200_000, "abc");
    expect((await collect(gzipSync(tar))).equals(tar)).toBe(true);
    expect((await collect(tar)).equals(tar)).toBe(true);
    expect((await collect(Buffer.from("ab"))).toString()).toBe("ab");
  });

  it("refuses zstd and reports broken gzip", async () => {
    await expect(collect(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2]))).rejects.toThrow(UnsupportedLayerError);
    const broken = gzipSync(Buffer.alloc(1000, 1));
    broken[20] = broken[20]! ^ 0xff;
    await expect(collect(broken)).rejects.toMatchObject({ code: expect.stringMatching(/^Z_/) });
  });
});

describe("layer streams read partly", () => {
  it("releases a gzip layer whose tar ends long before its data does", async () => {
    const { buildTar } = await import("./build-tar.js");
    const { readTarEntries } = await import("./tar-entries.js");
    const { randomBytes } = await import("node:crypto");
    const layer = gzipSync(Buffer.concat([buildTar([{ path: "a", content: "1" }]), randomBytes(4 * 1024 * 1024)]));
    async function* source() {
      for (let i = 0; i < layer.length; i += 65536) yield layer.subarray(i, i + 65536);
    }
    const paths: string[] = [];
    for await (const entry of readTarEntries(layerTarStream(source()), { want: () => false, maxEntryBytes: 1 }))
      paths.push(entry.path);
    expect(paths).toEqual(["a"]);
  });
});
