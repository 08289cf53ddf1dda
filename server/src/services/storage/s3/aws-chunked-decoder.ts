import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import { S3Error } from "./s3-error.js";
import { EMPTY_SHA256, hmac, signaturesEqual } from "./sigv4.js";

/**
 * The `aws-chunked` content encoding of S3 uploads whose `x-amz-content-sha256` is one of the
 * STREAMING-… modes: the body is a series of `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n`
 * frames ending with a zero-size one, optionally followed by trailing headers (a checksum) and a
 * blank line. With signed chunks each chunk's signature chains from the previous one, starting at
 * the request's own signature, so no chunk can be changed, dropped or reordered.
 */

export interface ChunkSigning {
  /** The request's signing key (verifySignature's answer). */
  readonly key: Uint8Array;
  readonly amzDate: string;
  readonly scope: string;
  /** The request's own signature: the first chunk's "previous" signature. */
  readonly seedSignature: string;
}

export const STREAMING_SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
export const STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
export const STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";

/** A chunk header line longer than this is not one. */
const MAX_HEADER_LINE = 4096;

const malformed = (why: string) => new S3Error("IncompleteBody", `the aws-chunked body is malformed: ${why}`);

/** The string a chunk's signature signs (AWS's "AWS4-HMAC-SHA256-PAYLOAD" form). */
export function chunkStringToSign(
  signing: Omit<ChunkSigning, "key" | "seedSignature">,
  previous: string,
  chunkSha256: string,
): string {
  return ["AWS4-HMAC-SHA256-PAYLOAD", signing.amzDate, signing.scope, previous, EMPTY_SHA256, chunkSha256].join("\n");
}

/**
 * The decoded content of an aws-chunked body. `signing` is given when chunks must carry valid
 * signatures (the signed modes); a missing or wrong signature is SignatureDoesNotMatch. A trailing
 * `x-amz-checksum-crc32` is checked against the content (BadDigest); other trailing checksums are
 * passed over. The generator throws before its last value when anything is wrong, so a consumer
 * that stores what it yields must only keep the result once the generator has finished.
 */
export async function* decodeAwsChunked(
  source: AsyncIterable<Uint8Array>,
  signing: ChunkSigning | undefined,
): AsyncGenerator<Buffer> {
  let buffer: Buffer = Buffer.alloc(0);
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const more = async (): Promise<boolean> => {
    if (ended) return false;
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      return false;
    }
    // A view of the chunk, not a copy: a stream never reuses a chunk it handed on.
    const chunk: Uint8Array = next.value;
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    buffer = buffer.length === 0 ? view : Buffer.concat([buffer, view]);
    return true;
  };
  const readLine = async (): Promise<string> => {
    for (;;) {
      const end = buffer.indexOf("\r\n");
      if (end !== -1) {
        const line = buffer.subarray(0, end).toString("latin1");
        buffer = buffer.subarray(end + 2);
        return line;
      }
      if (buffer.length > MAX_HEADER_LINE) throw malformed("a chunk header line is too long");
      if (!(await more())) throw malformed("the body ended inside a chunk header");
    }
  };

  let previous = signing?.seedSignature ?? "";
  let crc = 0;
  for (;;) {
    const header = await readLine();
    const match = /^([0-9a-fA-F]{1,16})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(header);
    if (!match) throw malformed(`"${header.slice(0, 40)}" is not a chunk header`);
    const size = parseInt(match[1]!, 16);
    const claimed = match[2];
    if (signing && !claimed)
      throw new S3Error("SignatureDoesNotMatch", "a chunk of a signed upload has no chunk-signature");
    const hash = createHash("sha256");
    let remaining = size;
    while (remaining > 0) {
      if (buffer.length === 0 && !(await more())) throw malformed("the body ended inside a chunk");
      const piece = buffer.subarray(0, Math.min(remaining, buffer.length));
      buffer = buffer.subarray(piece.length);
      remaining -= piece.length;
      hash.update(piece);
      crc = crc32(piece, crc);
      yield piece;
    }
    if (signing) {
      const expected = hmac(signing.key, chunkStringToSign(signing, previous, hash.digest("hex"))).toString("hex");
      if (!signaturesEqual(expected, claimed!))
        throw new S3Error("SignatureDoesNotMatch", "a chunk signature does not match the chunk's content");
      previous = expected;
    }
    if (size === 0) break;
    while (buffer.length < 2) if (!(await more())) throw malformed("a chunk is not followed by CRLF");
    if (buffer[0] !== 0x0d || buffer[1] !== 0x0a) throw malformed("a chunk is longer than its declared size");
    buffer = buffer.subarray(2);
  }

  // Trailing headers, if any, up to the blank line that ends the body.
  for (;;) {
    if (ended && buffer.length === 0) return;
    let line: string;
    try {
      line = await readLine();
    } catch (error) {
      // A body that simply ends after the last chunk (no trailer section) is complete.
      if (ended && buffer.length === 0) return;
      throw error;
    }
    if (line === "") return;
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "x-amz-checksum-crc32") {
      const expected = Buffer.alloc(4);
      expected.writeUInt32BE(crc >>> 0);
      if (expected.toString("base64") !== value)
        throw new S3Error("BadDigest", "the CRC32 checksum you specified did not match what we received");
    }
  }
}
