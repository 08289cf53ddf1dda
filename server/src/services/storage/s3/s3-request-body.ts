import { createHash } from "node:crypto";
import type { NodeRequest } from "../../../transport/plane-handler.js";
import {
  decodeAwsChunked,
  STREAMING_SIGNED,
  STREAMING_SIGNED_TRAILER,
  STREAMING_UNSIGNED_TRAILER,
} from "./aws-chunked-decoder.js";
import { S3Error } from "./s3-error.js";
import { UNSIGNED_PAYLOAD, type SignatureClaim } from "./sigv4.js";

/**
 * The body of a signed request as the client meant it: aws-chunked frames decoded and their
 * signatures checked, and the declared SHA-256 (`x-amz-content-sha256`) and `Content-MD5`
 * compared with what arrived. The checks finish when the last byte is read, so the generator
 * throws before it ends when they fail: whoever stores the body keeps it only once it ended.
 */
export function requestBody(
  request: NodeRequest,
  claim: SignatureClaim,
  signingKey: Buffer,
): AsyncGenerator<Uint8Array> {
  const mode = claim.payloadHash;
  const signing = { key: signingKey, amzDate: claim.amzDate, scope: claim.scope, seedSignature: claim.signature };
  let content: AsyncIterable<Uint8Array>;
  let expectedSha256: string | undefined;
  let decodedLength: number | undefined;
  if (mode === STREAMING_SIGNED || mode === STREAMING_SIGNED_TRAILER || mode === STREAMING_UNSIGNED_TRAILER) {
    content = decodeAwsChunked(request, mode === STREAMING_UNSIGNED_TRAILER ? undefined : signing);
    const declared = request.headers["x-amz-decoded-content-length"];
    if (typeof declared === "string" && /^[0-9]+$/.test(declared)) decodedLength = Number(declared);
  } else if (mode === UNSIGNED_PAYLOAD) {
    content = request;
  } else if (/^[0-9a-f]{64}$/.test(mode)) {
    content = request;
    expectedSha256 = mode;
  } else {
    throw new S3Error(
      "InvalidArgument",
      `x-amz-content-sha256: "${mode.slice(0, 80)}" is not a SHA-256 or a known payload mode`,
    );
  }
  const contentMd5 = request.headers["content-md5"];
  let expectedMd5: string | undefined;
  if (typeof contentMd5 === "string") {
    const digest = Buffer.from(contentMd5, "base64");
    if (digest.length !== 16) throw new S3Error("InvalidDigest", "the Content-MD5 you specified is not valid");
    expectedMd5 = digest.toString("hex");
  }

  return (async function* () {
    const sha256 = expectedSha256 === undefined ? undefined : createHash("sha256");
    const md5 = expectedMd5 === undefined ? undefined : createHash("md5");
    let size = 0;
    for await (const chunk of content) {
      sha256?.update(chunk);
      md5?.update(chunk);
      size += chunk.byteLength;
      yield chunk;
    }
    if (sha256 && sha256.digest("hex") !== expectedSha256)
      throw new S3Error(
        "XAmzContentSHA256Mismatch",
        "the provided x-amz-content-sha256 does not match what was computed",
      );
    if (md5 && md5.digest("hex") !== expectedMd5)
      throw new S3Error("BadDigest", "the Content-MD5 you specified did not match what we received");
    if (decodedLength !== undefined && size !== decodedLength)
      throw new S3Error("IncompleteBody", "the body is not as long as x-amz-decoded-content-length says");
  })();
}

/** A small XML body (CompleteMultipartUpload, Delete), read whole up to `maxBytes`. */
export async function readSmallBody(body: AsyncIterable<Uint8Array>, maxBytes = 2 * 1024 * 1024): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new S3Error("MalformedXML", `the XML body is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
