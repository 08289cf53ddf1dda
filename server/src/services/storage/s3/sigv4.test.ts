import { describe, expect, it } from "vitest";
import { decodeAwsChunked } from "./aws-chunked-decoder.js";
import { S3Error } from "./s3-error.js";
import { checkRequestTime, EMPTY_SHA256, readSignatureClaim, verifySignature, type RequestToVerify } from "./sigv4.js";

// The example requests of AWS's "Signature Calculations for the Authorization Header" and
// "Query Parameters" pages for S3: the same key, bucket and instant, and the signatures they print.
const accessKeyId = "AKIAIOSFODNN7EXAMPLE";
const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const scope = "20130524/us-east-1/s3/aws4_request";
const authorization = (signedHeaders: string, signature: string) =>
  `AWS4-HMAC-SHA256 Credential=${accessKeyId}/${scope},SignedHeaders=${signedHeaders},Signature=${signature}`;
const exampleTime = Date.UTC(2013, 4, 24);

function verify(request: RequestToVerify): Buffer {
  return verifySignature(request, readSignatureClaim(request), secret);
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof S3Error) return error.code;
    throw error;
  }
  return "accepted";
}

const getObject: RequestToVerify = {
  method: "GET",
  path: "/test.txt",
  query: "",
  headers: {
    host: "examplebucket.s3.amazonaws.com",
    range: "bytes=0-9",
    "x-amz-content-sha256": EMPTY_SHA256,
    "x-amz-date": "20130524T000000Z",
    authorization: authorization(
      "host;range;x-amz-content-sha256;x-amz-date",
      "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    ),
  },
};

describe("SigV4 verification", () => {
  it("accepts AWS's GET object example (header form)", () => {
    expect(() => verify(getObject)).not.toThrow();
  });

  it("accepts AWS's PUT object example, whose key needs encoding and whose Date header is signed", () => {
    expect(() =>
      verify({
        method: "PUT",
        path: "/test$file.text",
        query: "",
        headers: {
          host: "examplebucket.s3.amazonaws.com",
          date: "Fri, 24 May 2013 00:00:00 GMT",
          "x-amz-date": "20130524T000000Z",
          "x-amz-storage-class": "REDUCED_REDUNDANCY",
          "x-amz-content-sha256": "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
          authorization: authorization(
            "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
            "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
          ),
        },
      }),
    ).not.toThrow();
  });

  it("accepts AWS's list objects example, with a sorted query", () => {
    expect(() =>
      verify({
        method: "GET",
        path: "/",
        query: "max-keys=2&prefix=J",
        headers: {
          host: "examplebucket.s3.amazonaws.com",
          "x-amz-content-sha256": EMPTY_SHA256,
          "x-amz-date": "20130524T000000Z",
          authorization: authorization(
            "host;x-amz-content-sha256;x-amz-date",
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
          ),
        },
      }),
    ).not.toThrow();
  });

  it("accepts AWS's presigned GET example (query form)", () => {
    const query =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
      "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
      "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
    const request = { method: "GET", path: "/test.txt", query, headers: { host: "examplebucket.s3.amazonaws.com" } };
    expect(() => verify(request)).not.toThrow();
    const claim = readSignatureClaim(request);
    expect(refusal(() => checkRequestTime(claim, exampleTime + 86_400_000))).toBe("accepted");
    expect(refusal(() => checkRequestTime(claim, exampleTime + 86_401_000))).toBe("AccessDenied");
  });

  it("refuses a changed header, path, query, method or secret", () => {
    const changed = (patch: Partial<RequestToVerify>, headers: Record<string, string> = {}) =>
      refusal(() => verify({ ...getObject, ...patch, headers: { ...getObject.headers, ...headers } }));
    expect(changed({}, { range: "bytes=0-10" })).toBe("SignatureDoesNotMatch");
    expect(changed({ path: "/test.txu" })).toBe("SignatureDoesNotMatch");
    expect(changed({ query: "versionId=1" })).toBe("SignatureDoesNotMatch");
    expect(changed({ method: "HEAD" })).toBe("SignatureDoesNotMatch");
    expect(refusal(() => verifySignature(getObject, readSignatureClaim(getObject), secret + "x"))).toBe(
      "SignatureDoesNotMatch",
    );
  });

  it("refuses requests more than 15 minutes off the server's clock", () => {
    const claim = readSignatureClaim(getObject);
    expect(refusal(() => checkRequestTime(claim, exampleTime + 15 * 60_000))).toBe("accepted");
    expect(refusal(() => checkRequestTime(claim, exampleTime + 15 * 60_000 + 1))).toBe("RequestTimeTooSkewed");
    expect(refusal(() => checkRequestTime(claim, exampleTime - 15 * 60_000 - 1))).toBe("RequestTimeTooSkewed");
  });

  it("refuses unsigned, SigV2 and malformed requests with S3's codes", () => {
    expect(refusal(() => readSignatureClaim({ ...getObject, headers: { host: "h" } }))).toBe("AccessDenied");
    expect(
      refusal(() => readSignatureClaim({ ...getObject, headers: { authorization: "AWS AKIAIOSFODNN7EXAMPLE:abc" } })),
    ).toBe("InvalidRequest");
    expect(
      refusal(() =>
        readSignatureClaim({
          ...getObject,
          headers: { ...getObject.headers, authorization: "AWS4-HMAC-SHA256 Foo=1" },
        }),
      ),
    ).toBe("AuthorizationHeaderMalformed");
    const { "x-amz-content-sha256": _hash, ...noHash } = getObject.headers;
    expect(refusal(() => readSignatureClaim({ ...getObject, headers: noHash }))).toBe("InvalidRequest");
  });
});

describe("aws-chunked bodies", () => {
  // AWS's "Transferring Payload in Multiple Chunks" example: 66560 bytes of "a" in chunks of
  // 65536 and 1024 bytes, then the final empty chunk, each signed in a chain from the seed.
  const request: RequestToVerify = {
    method: "PUT",
    path: "/examplebucket/chunkObject.txt",
    query: "",
    headers: {
      host: "s3.amazonaws.com",
      "x-amz-date": "20130524T000000Z",
      "x-amz-storage-class": "REDUCED_REDUNDANCY",
      "content-encoding": "aws-chunked",
      "x-amz-decoded-content-length": "66560",
      "content-length": "66824",
      "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
      authorization: authorization(
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
      ),
    },
  };
  const chunkSignatures = [
    "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
    "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
    "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
  ];
  const body = (signatures = chunkSignatures, split = 1000): Buffer[] => {
    const whole = Buffer.concat([
      Buffer.from(`10000;chunk-signature=${signatures[0]}\r\n`),
      Buffer.alloc(65536, "a"),
      Buffer.from(`\r\n400;chunk-signature=${signatures[1]}\r\n`),
      Buffer.alloc(1024, "a"),
      Buffer.from(`\r\n0;chunk-signature=${signatures[2]}\r\n\r\n`),
    ]);
    expect(whole.length).toBe(66824);
    const pieces: Buffer[] = [];
    for (let i = 0; i < whole.length; i += split) pieces.push(whole.subarray(i, i + split));
    return pieces;
  };
  async function decode(pieces: Buffer[]): Promise<Buffer> {
    const claim = readSignatureClaim(request);
    const key = verifySignature(request, claim, secret);
    const out: Buffer[] = [];
    async function* source() {
      yield* pieces;
    }
    for await (const piece of decodeAwsChunked(source(), {
      key,
      amzDate: claim.amzDate,
      scope: claim.scope,
      seedSignature: claim.signature,
    }))
      out.push(piece);
    return Buffer.concat(out);
  }

  it("decodes AWS's example and checks every chunk signature, however the bytes arrive", async () => {
    for (const split of [1, 7, 1000, 70000]) {
      expect((await decode(body(chunkSignatures, split))).equals(Buffer.alloc(66560, "a"))).toBe(true);
    }
  });

  it("refuses a changed chunk, a changed signature and a truncated body", async () => {
    const changed = body(chunkSignatures, 70000);
    changed[0] = Buffer.from(changed[0]!);
    changed[0][200] = 0x62;
    await expect(decode(changed)).rejects.toMatchObject({ code: "SignatureDoesNotMatch" });
    const swapped = [chunkSignatures[1]!, chunkSignatures[0]!, chunkSignatures[2]!];
    await expect(decode(body(swapped))).rejects.toMatchObject({ code: "SignatureDoesNotMatch" });
    await expect(decode(body().slice(0, 30))).rejects.toMatchObject({ code: "IncompleteBody" });
  });
});
