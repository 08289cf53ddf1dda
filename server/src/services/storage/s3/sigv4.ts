import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { S3Error } from "./s3-error.js";

/**
 * AWS Signature Version 4 as S3 checks it, for the header form (`Authorization: AWS4-HMAC-SHA256
 * Credential=…, SignedHeaders=…, Signature=…`) and the presigned query form (`X-Amz-Signature`
 * and its siblings). This file knows the algorithm and nothing of keys: the caller looks the
 * access key id up and hands the secret to `verifySignature`.
 */

export const ALGORITHM = "AWS4-HMAC-SHA256";
export const UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";
export const EMPTY_SHA256 = createHash("sha256").update("").digest("hex");
/** S3 refuses a request whose time is further than this from its own clock. */
export const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
/** A presigned URL lives at most 7 days, as on S3. */
export const MAX_PRESIGNED_EXPIRY_SECONDS = 7 * 24 * 3600;

/** The parts of a request the signature covers, as they arrived. */
export interface RequestToVerify {
  readonly method: string;
  /** The path as sent, percent-encoded, without the query. */
  readonly path: string;
  /** The query as sent, without `?`. */
  readonly query: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What a request claims about its signature, before the key is looked up. */
export interface SignatureClaim {
  readonly form: "header" | "query";
  readonly accessKeyId: string;
  /** `yyyymmdd/region/service/aws4_request`. */
  readonly scope: string;
  readonly region: string;
  /** `yyyymmddThhmmssZ`, the request's own time. */
  readonly amzDate: string;
  readonly signedHeaders: readonly string[];
  readonly signature: string;
  /** `x-amz-content-sha256` (hex, UNSIGNED-PAYLOAD or a STREAMING-… mode); UNSIGNED-PAYLOAD for presigned URLs. */
  readonly payloadHash: string;
  /** Presigned URLs only: seconds from `amzDate` on which the URL is valid. */
  readonly expiresSeconds?: number;
}

const headerValue = (headers: RequestToVerify["headers"], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
};

/** Reads the claim of a signed request; AccessDenied for an unsigned one (no anonymous access here). */
export function readSignatureClaim(request: RequestToVerify): SignatureClaim {
  const query = new URLSearchParams(request.query);
  const authorization = headerValue(request.headers, "authorization");
  if (authorization !== undefined) return readHeaderClaim(authorization, request);
  if (query.has("X-Amz-Signature") || query.has("X-Amz-Algorithm")) return readQueryClaim(query, request);
  if (query.has("Signature") || query.has("AWSAccessKeyId"))
    throw new S3Error("InvalidRequest", "only AWS Signature Version 4 is accepted (X-Amz-Algorithm=AWS4-HMAC-SHA256)");
  throw new S3Error(
    "AccessDenied",
    "anonymous requests are not accepted: sign the request with AWS Signature Version 4",
  );
}

function readHeaderClaim(authorization: string, request: RequestToVerify): SignatureClaim {
  const malformed = (why: string) => new S3Error("AuthorizationHeaderMalformed", `the Authorization header ${why}`);
  const space = authorization.indexOf(" ");
  const algorithm = space === -1 ? authorization : authorization.slice(0, space);
  if (algorithm !== ALGORITHM) {
    throw new S3Error(
      "InvalidRequest",
      `the authorization mechanism "${algorithm.slice(0, 30)}" is not supported: use ${ALGORITHM}`,
    );
  }
  const fields = new Map<string, string>();
  for (const part of authorization.slice(space + 1).split(",")) {
    const eq = part.indexOf("=");
    if (eq !== -1) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get("Credential");
  const signedHeaders = fields.get("SignedHeaders");
  const signature = fields.get("Signature");
  if (!credential || !signedHeaders || !signature) throw malformed("needs Credential, SignedHeaders and Signature");
  const amzDate = headerValue(request.headers, "x-amz-date") ?? fromHttpDate(headerValue(request.headers, "date"));
  if (!amzDate) throw new S3Error("AccessDenied", "the request needs an x-amz-date or Date header");
  const payloadHash = headerValue(request.headers, "x-amz-content-sha256");
  if (!payloadHash)
    throw new S3Error("InvalidRequest", "missing required header for this request: x-amz-content-sha256");
  return {
    form: "header",
    ...readCredential(credential, amzDate, malformed),
    amzDate,
    signedHeaders: signedHeaders.split(";"),
    signature,
    payloadHash,
  };
}

function readQueryClaim(query: URLSearchParams, request: RequestToVerify): SignatureClaim {
  const malformed = (why: string) => new S3Error("AuthorizationQueryParametersError", `the presigned URL ${why}`);
  const get = (name: string) => {
    const value = query.get(name);
    if (!value) throw malformed(`needs the query parameter ${name}`);
    return value;
  };
  if (get("X-Amz-Algorithm") !== ALGORITHM) throw malformed(`must use X-Amz-Algorithm=${ALGORITHM}`);
  const amzDate = get("X-Amz-Date");
  const expiresText = get("X-Amz-Expires");
  const expiresSeconds = Number(expiresText);
  if (!/^[0-9]+$/.test(expiresText) || expiresSeconds < 1 || expiresSeconds > MAX_PRESIGNED_EXPIRY_SECONDS)
    throw malformed(`needs X-Amz-Expires from 1 to ${MAX_PRESIGNED_EXPIRY_SECONDS} seconds`);
  void request;
  return {
    form: "query",
    ...readCredential(get("X-Amz-Credential"), amzDate, malformed),
    amzDate,
    signedHeaders: get("X-Amz-SignedHeaders").split(";"),
    signature: get("X-Amz-Signature"),
    payloadHash: query.get("X-Amz-Content-Sha256") ?? UNSIGNED_PAYLOAD,
    expiresSeconds,
  };
}

function readCredential(
  credential: string,
  amzDate: string,
  malformed: (why: string) => S3Error,
): Pick<SignatureClaim, "accessKeyId" | "scope" | "region"> {
  // The access key id cannot hold "/", so the scope is the last four parts.
  const parts = credential.split("/");
  if (parts.length < 5) throw malformed("has a Credential that is not <key id>/<date>/<region>/s3/aws4_request");
  const [date, region, service, terminator] = parts.slice(-4) as [string, string, string, string];
  if (!/^\d{8}T\d{6}Z$/.test(amzDate))
    throw malformed(`has a date "${amzDate.slice(0, 20)}" not in yyyyMMddTHHmmssZ form`);
  if (date !== amzDate.slice(0, 8)) throw malformed(`has a Credential date ${date} that is not the request's date`);
  if (service !== "s3" || terminator !== "aws4_request")
    throw malformed(`has a Credential scope for "${service}", expected s3 and aws4_request`);
  return { accessKeyId: parts.slice(0, -4).join("/"), scope: `${date}/${region}/${service}/${terminator}`, region };
}

/** `Fri, 24 May 2013 00:00:00 GMT` → `20130524T000000Z`, or undefined. */
function fromHttpDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? undefined : toAmzDate(time);
}

export function toAmzDate(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

export function parseAmzDate(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate)!;
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

/** RequestTimeTooSkewed for a header-signed request too far from `now`; expiry for a presigned one. */
export function checkRequestTime(claim: SignatureClaim, now: number): void {
  const time = parseAmzDate(claim.amzDate);
  if (claim.form === "query") {
    if (time - now > MAX_CLOCK_SKEW_MS) throw new S3Error("AccessDenied", "the presigned URL is not valid yet");
    if (now > time + claim.expiresSeconds! * 1000) throw new S3Error("AccessDenied", "request has expired");
    return;
  }
  if (Math.abs(now - time) > MAX_CLOCK_SKEW_MS) {
    throw new S3Error(
      "RequestTimeTooSkewed",
      "the difference between the request time and the server's time is more than 15 minutes",
      { RequestTime: claim.amzDate, ServerTime: new Date(now).toISOString() },
    );
  }
}

/** AWS's URI encoding: unreserved characters kept, every other UTF-8 byte as %XX (upper-case). */
export function awsUriEncode(value: string, keepSlash = false): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === "/")) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function decodeOrKeep(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** S3 encodes the path once (no double encoding, no `.` segment removal). */
function canonicalPath(path: string): string {
  return path
    .split("/")
    .map((segment) => awsUriEncode(decodeOrKeep(segment)))
    .join("/");
}

function canonicalQuery(query: string, dropSignature: boolean): string {
  const pairs: [string, string][] = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = awsUriEncode(decodeOrKeep(eq === -1 ? part : part.slice(0, eq)));
    const value = awsUriEncode(decodeOrKeep(eq === -1 ? "" : part.slice(eq + 1)));
    if (dropSignature && name === "X-Amz-Signature") continue;
    pairs.push([name, value]);
  }
  pairs.sort(([an, av], [bn, bv]) => (an < bn ? -1 : an > bn ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join("&");
}

function canonicalHeaders(request: RequestToVerify, signedHeaders: readonly string[]): string {
  return signedHeaders
    .map((name) => {
      // HTTP/2 carries the host as :authority.
      const value =
        headerValue(request.headers, name) ??
        (name === "host" ? headerValue(request.headers, ":authority") : undefined);
      return `${name}:${(value ?? "").trim().replace(/\s+/g, " ")}\n`;
    })
    .join("");
}

export function canonicalRequest(request: RequestToVerify, claim: SignatureClaim): string {
  return [
    request.method,
    canonicalPath(request.path),
    canonicalQuery(request.query, claim.form === "query"),
    canonicalHeaders(request, claim.signedHeaders),
    claim.signedHeaders.join(";"),
    claim.payloadHash,
  ].join("\n");
}

export function stringToSign(claim: Pick<SignatureClaim, "amzDate" | "scope">, canonical: string): string {
  return [ALGORITHM, claim.amzDate, claim.scope, sha256Hex(canonical)].join("\n");
}

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
export function signingKey(secret: string, scope: string): Buffer {
  let key: Buffer = Buffer.from(`AWS4${secret}`, "utf8");
  for (const part of scope.split("/")) key = hmac(key, part);
  return key;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function hmac(key: Uint8Array, data: string): Buffer {
  return createHmac("sha256", key).update(data, "utf8").digest();
}

/** Constant time over equal lengths; a different length is simply not equal. */
export function signaturesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Checks the claimed signature with the key's secret; SignatureDoesNotMatch otherwise. Answers
 * the signing key, which a chunked upload's chunk signatures go on with.
 */
export function verifySignature(request: RequestToVerify, claim: SignatureClaim, secret: string): Buffer {
  if (!claim.signedHeaders.includes("host")) throw new S3Error("AccessDenied", "the signed headers must include host");
  const key = signingKey(secret, claim.scope);
  const expected = hmac(key, stringToSign(claim, canonicalRequest(request, claim))).toString("hex");
  if (!signaturesEqual(expected, claim.signature.toLowerCase())) {
    throw new S3Error(
      "SignatureDoesNotMatch",
      "the request signature we calculated does not match the signature you provided: check your key and signing method",
      { AWSAccessKeyId: claim.accessKeyId },
    );
  }
  return key;
}
