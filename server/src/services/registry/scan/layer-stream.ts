import { pipeline, Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { ByteReader } from "./byte-reader.js";

/** A layer compression the scanner cannot read (zstd: Node 20's zlib has no decoder). */
export class UnsupportedLayerError extends Error {}

const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/**
 * The uncompressed tar bytes of a layer blob, told apart by their first bytes rather than by the
 * descriptor's media type: clients are loose with media types, the bytes are not.
 */
export async function* layerTarStream(blob: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = new ByteReader(blob);
  const head = await reader.read(4);
  const rest = async function* (): AsyncGenerator<Uint8Array> {
    yield head;
    for (;;) {
      const chunk = await reader.read(64 * 1024);
      if (chunk.length === 0) return;
      yield chunk;
    }
  };
  if (startsWith(head, ZSTD_MAGIC)) {
    await reader.close();
    throw new UnsupportedLayerError("zstd-compressed layers are not supported by the scanner");
  }
  if (startsWith(head, GZIP_MAGIC)) {
    // pipeline ties the two ends together: a source error fails the reads, and a reader that stops
    // early (the tar's end-of-archive blocks come before the gzip data ends) destroys both.
    const gunzip = pipeline(Readable.from(rest()), createGunzip(), () => {});
    try {
      for await (const chunk of gunzip) yield chunk as Buffer;
    } finally {
      gunzip.destroy();
      await reader.close();
    }
    return;
  }
  try {
    yield* rest();
  } finally {
    await reader.close();
  }
}

function startsWith(bytes: Buffer, magic: readonly number[]): boolean {
  return magic.every((byte, i) => bytes[i] === byte);
}
