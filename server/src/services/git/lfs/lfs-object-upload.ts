import { createHash } from "node:crypto";
import type { BlobStore } from "../../../blob/blob-store.js";
import { LfsError } from "./lfs-batch.js";

/**
 * Streams an upload into the store while hashing it: when the bytes do not hash to `oid`, or pass
 * `maxBytes`, the source fails before it ends, so the store keeps nothing (and any earlier good copy
 * stays). Never holds the object in memory.
 */
export async function storeLfsObject(
  blobs: BlobStore,
  key: string,
  oid: string,
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<number> {
  let size = 0;
  async function* verified(): AsyncGenerator<Uint8Array> {
    const hash = createHash("sha256");
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > maxBytes) throw new LfsError(413, `object is larger than ${maxBytes} bytes`);
      hash.update(chunk);
      yield chunk;
    }
    if (hash.digest("hex") !== oid) throw new LfsError(422, "content does not match its oid (sha256)");
  }
  await blobs.write(key, verified(), { contentType: "application/octet-stream" });
  return size;
}
