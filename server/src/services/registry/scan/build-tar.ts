/**
 * Writes small ustar archives in memory, for tests that need layers: regular files, directories,
 * symbolic links and whiteout markers (which are empty regular files).
 */
export interface TarSpec {
  readonly path: string;
  readonly content?: string | Uint8Array;
  readonly type?: "file" | "directory" | "symlink";
  readonly linkName?: string;
}

export function buildTar(entries: readonly TarSpec[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? "file";
    const content =
      typeof entry.content === "string" ? Buffer.from(entry.content, "utf8") : Buffer.from(entry.content ?? []);
    const header = Buffer.alloc(512);
    header.write(entry.path, 0, 100, "utf8");
    header.write(type === "directory" ? "0000755\0" : "0000644\0", 100, "ascii");
    header.write("0000000\0", 108, "ascii");
    header.write("0000000\0", 116, "ascii");
    header.write(`${(type === "file" ? content.length : 0).toString(8).padStart(11, "0")}\0`, 124, "ascii");
    header.write("00000000000\0", 136, "ascii");
    header.write(type === "file" ? "0" : type === "directory" ? "5" : "2", 156, "ascii");
    if (entry.linkName) header.write(entry.linkName, 157, 100, "utf8");
    header.write("ustar\0", 257, "ascii");
    header.write("00", 263, "ascii");
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
    blocks.push(header);
    if (type === "file" && content.length > 0) {
      blocks.push(content, Buffer.alloc((512 - (content.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}
