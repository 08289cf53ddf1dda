import { createHash, createHmac, randomBytes } from "node:crypto";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { request } from "undici";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetBucketLocationCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Readable } from "node:stream";
import { inject } from "vitest";
import { beforeAll, describe, expect, it } from "vitest";
import { s3Credentials } from "../../sdk/src/index.js";
import { createOrganization, type TestOrganization } from "./shared-server.js";

// The S3 listener driven by the unmodified AWS SDK for JavaScript v3, path-style, with the S3
// credentials derived from organization API keys.
const s3Url = () => inject("platformUrls").s3!;

function clientFor(
  credentials: { accessKeyId: string; secretAccessKey: string },
  extra: Partial<S3ClientConfig> = {},
): S3Client {
  return new S3Client({
    ...extra,
    endpoint: s3Url(),
    region: "us-east-1",
    forcePathStyle: true,
    credentials,
    maxAttempts: 1,
  });
}

/** The S3 error code a call failed with, or "ok". */
async function failure(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    // A 304 has no body to name an error: the SDK calls it Unknown.
    if (error instanceof S3ServiceException)
      return error.name === "Unknown" ? String(error.$metadata.httpStatusCode) : error.name;
    throw error;
  }
}

let acme: TestOrganization;
let other: TestOrganization;
let s3: S3Client;
let editor: { accessKeyId: string; secretAccessKey: string };
let otherS3: S3Client;
const bucket = `data-${randomBytes(3).toString("hex")}`;

async function keyWithRoles(org: TestOrganization, roles: string[]) {
  const issued = await org.client.iam.createApiKey({ orgId: org.id, name: `s3-${roles.join("-")}`, roles });
  return { keyId: issued.apiKey!.keyId, credentials: await s3Credentials(issued.apiKey!.keyId, issued.secret) };
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** A PUT signed by AWS's own SigV4 signer (not the SDK's S3 client), its body made from the signed headers. */
async function signedPut(
  credentials: { accessKeyId: string; secretAccessKey: string },
  key: string,
  headers: Record<string, string>,
  body: (signed: Record<string, string>) => Buffer,
): Promise<{ status: number; text: string }> {
  const url = new URL(`${s3Url()}/${bucket}/${key}`);
  const signer = new SignatureV4({
    credentials,
    region: "us-east-1",
    service: "s3",
    sha256: Sha256,
    uriEscapePath: false,
  });
  const signed = await signer.sign({
    method: "PUT",
    protocol: "http:",
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: {},
    headers: { host: url.host, ...headers },
  });
  const answer = await request(url, { method: "PUT", headers: signed.headers, body: body(signed.headers) });
  return { status: answer.statusCode, text: await answer.body.text() };
}

beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("s3"), createOrganization("s3-other")]);
  editor = (await keyWithRoles(acme, ["data.editor"])).credentials;
  s3 = clientFor(editor);
  otherS3 = clientFor((await keyWithRoles(other, ["data.editor"])).credentials);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});

describe("S3-compatible API with the AWS SDK", () => {
  it("creates, lists, heads and locates buckets, once per organization", async () => {
    const listed = await s3.send(new ListBucketsCommand({}));
    expect(listed.Buckets?.map((b) => b.Name)).toEqual([bucket]);
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    expect((await s3.send(new GetBucketLocationCommand({ Bucket: bucket }))).LocationConstraint).toBeFalsy();
    expect(await failure(s3.send(new CreateBucketCommand({ Bucket: bucket })))).toBe("BucketAlreadyOwnedByYou");
    expect(await failure(s3.send(new CreateBucketCommand({ Bucket: "Bad_Name" })))).toBe("InvalidBucketName");
    // The same name is free in another organization, and each sees only its own.
    await otherS3.send(new CreateBucketCommand({ Bucket: bucket }));
    await otherS3.send(new PutObjectCommand({ Bucket: bucket, Key: "theirs.txt", Body: "other" }));
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "theirs.txt" })))).toBe("NotFound");
  });

  it("puts, gets (whole, ranges, conditionals) and heads objects with metadata", async () => {
    const body = "hello, object storage";
    const put = await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: "docs/hello world.txt",
        Body: body,
        ContentType: "text/plain",
        Metadata: { owner: "acme" },
      }),
    );
    const md5 = createHash("md5").update(body).digest("hex");
    expect(put.ETag).toBe(`"${md5}"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt" }));
    expect(await got.Body!.transformToString()).toBe(body);
    expect([got.ContentType, got.ContentLength, got.ETag, got.Metadata]).toEqual([
      "text/plain",
      body.length,
      `"${md5}"`,
      { owner: "acme" },
    ]);
    const ranged = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt", Range: "bytes=7-12" }),
    );
    expect([await ranged.Body!.transformToString(), ranged.ContentRange]).toEqual([
      "object",
      `bytes 7-12/${body.length}`,
    ]);
    const suffix = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt", Range: "bytes=-7" }),
    );
    expect(await suffix.Body!.transformToString()).toBe("storage");
    expect(
      await failure(
        s3.send(new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt", Range: "bytes=500-" })),
      ),
    ).toBe("InvalidRange");
    expect(
      await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt", IfMatch: '"abc"' }))),
    ).toBe("PreconditionFailed");
    expect(
      await failure(
        s3.send(new GetObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt", IfNoneMatch: `"${md5}"` })),
      ),
    ).toBe("304");
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "docs/hello world.txt" }));
    expect([head.ContentLength, head.ETag]).toEqual([body.length, `"${md5}"`]);
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: "missing" })))).toBe("NoSuchKey");
    // NUL cannot be stored: refused as bad input, never a server error.
    expect(await failure(s3.send(new GetObjectCommand({ Bucket: bucket, Key: "a\0b" })))).toBe("InvalidArgument");
    expect(await failure(s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "\0" })))).toBe("InvalidArgument");
  });

  it("takes streamed bodies: aws-chunked with a CRC32 trailer, and unsigned payloads", async () => {
    const body = () => Readable.from([Buffer.from("streamed "), Buffer.from("body")]);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "stream/trailer", Body: body(), ContentLength: 13 }));
    const unsigned = clientFor(editor, { requestChecksumCalculation: "WHEN_REQUIRED" });
    await unsigned.send(
      new PutObjectCommand({ Bucket: bucket, Key: "stream/unsigned", Body: body(), ContentLength: 13 }),
    );
    for (const key of ["stream/trailer", "stream/unsigned"]) {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      expect(await got.Body!.transformToString()).toBe("streamed body");
    }
  });

  it("takes a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload, and refuses it with a changed chunk", async () => {
    const credentials = (await keyWithRoles(acme, ["data.editor"])).credentials;
    const data = randomBytes(70_000);
    async function send(key: string, tamper: boolean) {
      const chunks = [data.subarray(0, 65536), data.subarray(65536), Buffer.alloc(0)];
      const frameLength = (c: Buffer) => c.length.toString(16).length + ";chunk-signature=".length + 64 + 4 + c.length;
      const headers = {
        "content-encoding": "aws-chunked",
        "x-amz-decoded-content-length": String(data.length),
        "content-length": String(chunks.reduce((n, c) => n + frameLength(c), 0)),
        "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
      };
      return signedPut(credentials, key, headers, (signed) => {
        const date = signed["x-amz-date"]!;
        const scope = `${date.slice(0, 8)}/us-east-1/s3/aws4_request`;
        // Each chunk's signature chains from the previous one, as AWS documents it.
        let signingKey: Buffer = Buffer.from(`AWS4${credentials.secretAccessKey}`);
        for (const part of scope.split("/")) signingKey = createHmac("sha256", signingKey).update(part).digest();
        let previous = /Signature=([0-9a-f]{64})/.exec(signed.authorization!)![1]!;
        const frames = chunks.map((chunk) => {
          const toSign = ["AWS4-HMAC-SHA256-PAYLOAD", date, scope, previous, sha256(""), sha256(chunk)].join("\n");
          previous = createHmac("sha256", signingKey).update(toSign).digest("hex");
          const sent = tamper && chunk.length > 0 ? Buffer.from(chunk).fill(0, 0, 1) : chunk;
          return Buffer.concat([
            Buffer.from(`${chunk.length.toString(16)};chunk-signature=${previous}\r\n`),
            sent,
            Buffer.from("\r\n"),
          ]);
        });
        return Buffer.concat(frames);
      });
    }
    expect((await send("chunked/signed.bin", false)).status).toBe(200);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "chunked/signed.bin" }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(data)).toBe(true);
    const refused = await send("chunked/tampered.bin", true);
    expect([refused.status, refused.text]).toEqual([
      403,
      expect.stringContaining("<Code>SignatureDoesNotMatch</Code>"),
    ]);
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "chunked/tampered.bin" })))).toBe(
      "NotFound",
    );
  });

  it("stores nothing when the body does not match its SHA-256, Content-MD5 or CRC32 trailer", async () => {
    const mismatch = await signedPut(editor, "check/sha", { "x-amz-content-sha256": sha256("declared") }, () =>
      Buffer.from("sent instead"),
    );
    expect([mismatch.status, mismatch.text]).toEqual([400, expect.stringContaining("XAmzContentSHA256Mismatch")]);
    const md5 = createHash("md5").update("other").digest("base64");
    expect(
      await failure(s3.send(new PutObjectCommand({ Bucket: bucket, Key: "check/md5", Body: "x", ContentMD5: md5 }))),
    ).toBe("BadDigest");
    const crc = await signedPut(
      editor,
      "check/crc",
      {
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "content-encoding": "aws-chunked",
        "x-amz-trailer": "x-amz-checksum-crc32",
        "x-amz-decoded-content-length": "5",
      },
      () => Buffer.from("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"),
    );
    expect([crc.status, crc.text]).toEqual([400, expect.stringContaining("BadDigest")]);
    for (const key of ["check/sha", "check/md5", "check/crc"])
      expect(await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })))).toBe("NotFound");
  });

  it("refuses a request signed more than 15 minutes off the server's clock", async () => {
    const skewed = clientFor(editor, { systemClockOffset: 16 * 60 * 1000 });
    expect(await failure(skewed.send(new ListBucketsCommand({})))).toBe("RequestTimeTooSkewed");
  });

  it("lists with prefix, delimiter and pages (v2), and v1", async () => {
    const keys = ["list/a/1", "list/a/2", "list/b", "list/c/x/1", "list/d", "list/é ü", "list/x&<y>\"'"];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    const grouped = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "list/", Delimiter: "/" }));
    expect(grouped.Contents?.map((c) => c.Key)).toEqual(["list/b", "list/d", "list/x&<y>\"'", "list/é ü"]);
    expect(grouped.CommonPrefixes?.map((p) => p.Prefix)).toEqual(["list/a/", "list/c/"]);
    expect(grouped.KeyCount).toBe(6);

    const paged: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: "list/", MaxKeys: 2, ContinuationToken: token }),
      );
      paged.push(...(page.Contents ?? []).map((c) => c.Key!));
      token = page.NextContinuationToken;
      expect(page.IsTruncated).toBe(token !== undefined);
    } while (token);
    expect(paged).toEqual([...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));

    const after = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "list/", StartAfter: "list/b" }));
    expect(after.Contents?.map((c) => c.Key)).toEqual(["list/c/x/1", "list/d", "list/x&<y>\"'", "list/é ü"]);
    const v1 = await s3.send(new ListObjectsCommand({ Bucket: bucket, Prefix: "list/a/", MaxKeys: 1 }));
    expect([v1.Contents?.map((c) => c.Key), v1.IsTruncated]).toEqual([["list/a/1"], true]);
  });

  it("copies, deletes and batch-deletes objects", async () => {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: "copy/src", Body: "copied bytes", Metadata: { a: "1" } }),
    );
    const copy = await s3.send(
      new CopyObjectCommand({ Bucket: bucket, Key: "copy/dst", CopySource: `${bucket}/copy/src` }),
    );
    expect(copy.CopyObjectResult?.ETag).toBe(`"${createHash("md5").update("copied bytes").digest("hex")}"`);
    const copied = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "copy/dst" }));
    expect([await copied.Body!.transformToString(), copied.Metadata]).toEqual(["copied bytes", { a: "1" }]);
    expect(
      await failure(s3.send(new CopyObjectCommand({ Bucket: bucket, Key: "x", CopySource: `${bucket}/copy/none` }))),
    ).toBe("NoSuchKey");

    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "copy/dst" }));
    expect(await failure(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: "copy/dst" })))).toBe("NotFound");
    const batch = await s3.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: [{ Key: "copy/src" }, { Key: "list/b" }, { Key: "never-existed" }] },
      }),
    );
    expect(batch.Deleted?.map((d) => d.Key).sort()).toEqual(["copy/src", "list/b", "never-existed"]);
    const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "copy/" }));
    expect(left.KeyCount).toBe(0);
  });

  it("uploads ~12 MiB in parts with lib-storage, with S3's multipart etag", async () => {
    const content = randomBytes(12 * 1024 * 1024 + 123);
    const upload = new Upload({
      client: s3,
      params: {
        Bucket: bucket,
        Key: "big/blob.bin",
        Body: Readable.from([content]),
        ContentType: "application/x-test",
      },
      partSize: 5 * 1024 * 1024,
      queueSize: 2,
    });
    const done = await upload.done();
    const partDigests = [0, 1, 2].map((i) =>
      createHash("md5")
        .update(content.subarray(i * 5 * 1024 * 1024, (i + 1) * 5 * 1024 * 1024))
        .digest(),
    );
    expect(done.ETag).toBe(`"${createHash("md5").update(Buffer.concat(partDigests)).digest("hex")}-3"`);
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "big/blob.bin" }));
    expect(got.ContentType).toBe("application/x-test");
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(content)).toBe(true);
    const tail = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: "big/blob.bin", Range: "bytes=10485760-10485769" }),
    );
    expect(Buffer.from(await tail.Body!.transformToByteArray()).equals(content.subarray(10485760, 10485770))).toBe(
      true,
    );
  });

  it("lists, checks and aborts multipart uploads by hand", async () => {
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: "mp/manual" }));
    const small = await s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: "mp/manual", UploadId, PartNumber: 1, Body: "tiny" }),
    );
    await s3.send(new UploadPartCommand({ Bucket: bucket, Key: "mp/manual", UploadId, PartNumber: 2, Body: "end" }));
    const parts = await s3.send(new ListPartsCommand({ Bucket: bucket, Key: "mp/manual", UploadId }));
    expect(parts.Parts?.map((p) => [p.PartNumber, p.Size])).toEqual([
      [1, 4],
      [2, 3],
    ]);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    expect(uploads.Uploads?.map((u) => u.UploadId)).toContain(UploadId);
    const complete = (Parts: { PartNumber: number; ETag: string }[]) =>
      s3.send(
        new CompleteMultipartUploadCommand({ Bucket: bucket, Key: "mp/manual", UploadId, MultipartUpload: { Parts } }),
      );
    expect(
      await failure(
        complete([
          { PartNumber: 1, ETag: small.ETag! },
          { PartNumber: 2, ETag: '"00"' },
        ]),
      ),
    ).toBe("InvalidPart");
    expect(
      await failure(
        complete([
          { PartNumber: 2, ETag: small.ETag! },
          { PartNumber: 1, ETag: small.ETag! },
        ]),
      ),
    ).toBe("InvalidPartOrder");
    const parts2 = parts.Parts!.map((p) => ({ PartNumber: p.PartNumber!, ETag: p.ETag! }));
    expect(await failure(complete(parts2))).toBe("EntityTooSmall");
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: "mp/manual", UploadId }));
    expect(await failure(s3.send(new ListPartsCommand({ Bucket: bucket, Key: "mp/manual", UploadId })))).toBe(
      "NoSuchUpload",
    );
  });

  it("serves a presigned GET to a plain HTTP client, until it is tampered with", async () => {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: "shared/report.txt", Body: "presigned content" }));
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: "shared/report.txt" }), {
      expiresIn: 60,
    });
    const answer = await fetch(url);
    expect([answer.status, await answer.text()]).toEqual([200, "presigned content"]);
    const tampered = await fetch(url.replace("report.txt", "other.txt"));
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    const unsigned = await fetch(`${s3Url()}/${bucket}/shared/report.txt`);
    expect(unsigned.status).toBe(403);
  });

  it("refuses a wrong secret, another organization's bucket, and a revoked key", async () => {
    const { keyId, credentials } = await keyWithRoles(acme, ["data.viewer"]);
    const wrong = clientFor({ accessKeyId: keyId, secretAccessKey: credentials.secretAccessKey + "x" });
    expect(await failure(wrong.send(new ListBucketsCommand({})))).toBe("SignatureDoesNotMatch");
    const unknown = clientFor({ accessKeyId: "00000000-0000-4000-8000-000000000000", secretAccessKey: "x" });
    expect(await failure(unknown.send(new ListBucketsCommand({})))).toBe("InvalidAccessKeyId");

    const viewer = clientFor(credentials);
    expect((await viewer.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: "shared/" }))).KeyCount).toBe(1);
    expect(await failure(viewer.send(new PutObjectCommand({ Bucket: bucket, Key: "nope", Body: "x" })))).toBe(
      "AccessDenied",
    );
    const otherBucket = `other-${randomBytes(3).toString("hex")}`;
    await otherS3.send(new CreateBucketCommand({ Bucket: otherBucket }));
    expect(await failure(viewer.send(new ListObjectsV2Command({ Bucket: otherBucket })))).toBe("NoSuchBucket");
    expect(await failure(s3.send(new PutObjectCommand({ Bucket: otherBucket, Key: "k", Body: "x" })))).toBe(
      "NoSuchBucket",
    );

    await acme.client.iam.revokeApiKey({ orgId: acme.id, keyId });
    expect(await failure(viewer.send(new ListObjectsV2Command({ Bucket: bucket })))).toBe("InvalidAccessKeyId");
  });

  it("deletes a bucket only when it is empty", async () => {
    const name = `gone-${randomBytes(3).toString("hex")}`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    await s3.send(new PutObjectCommand({ Bucket: name, Key: "k", Body: "x" }));
    expect(await failure(s3.send(new DeleteBucketCommand({ Bucket: name })))).toBe("BucketNotEmpty");
    await s3.send(new DeleteObjectCommand({ Bucket: name, Key: "k" }));
    await s3.send(new DeleteBucketCommand({ Bucket: name }));
    expect(await failure(s3.send(new HeadBucketCommand({ Bucket: name })))).toBe("NotFound");
  });
});
