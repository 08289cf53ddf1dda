import { createHash } from "node:crypto";
import { S3Error } from "./s3/s3-error.js";

/** S3's largest single PUT (and multipart part): 5 GiB. */
export const MAX_PUT_BYTES = 5 * 1024 ** 3;

/** What a streamed body turned out to be, known once it has been read to the end. */
export interface MeasuredBody {
  size: number;
  /** MD5 of the content, hex: S3's etag of a single-part object. */
  md5: string;
}

/**
 * Passes `source` through while measuring it: its MD5 (the etag) and size, refusing more than
 * `maxBytes` (EntityTooLarge) before the excess is stored. `measured` is filled when the source ends.
 */
export function measureBody(
  source: AsyncIterable<Uint8Array>,
  measured: MeasuredBody,
  maxBytes = MAX_PUT_BYTES,
): AsyncGenerator<Uint8Array> {
  return (async function* () {
    const md5 = createHash("md5");
    let size = 0;
    for await (const chunk of source) {
      size += chunk.byteLength;
      if (size > maxBytes)
        throw new S3Error(
          "EntityTooLarge",
          `your proposed upload exceeds the maximum allowed size of ${maxBytes} bytes`,
        );
      md5.update(chunk);
      yield chunk;
    }
    measured.size = size;
    measured.md5 = md5.digest("hex");
  })();
}
