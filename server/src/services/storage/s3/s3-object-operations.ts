import { pipeline } from "node:stream/promises";
import { parseByteRange } from "../../../blob/byte-range.js";
import type { BucketDirectory, ObjectInfo } from "../bucket-directory.js";
import { S3Error } from "./s3-error.js";
import { contentTypeOf, header, metadataOf, quoted, sendEmpty, sendXml, type S3Exchange } from "./s3-exchange.js";
import { isoTime } from "./s3-xml.js";

const noSuchKey = (key: string) => new S3Error("NoSuchKey", "the specified key does not exist", { Key: key });

/** `response-*` query parameters of a GET and the headers they override. */
const overrides = {
  "response-content-type": "content-type",
  "response-content-language": "content-language",
  "response-expires": "expires",
  "response-cache-control": "cache-control",
  "response-content-disposition": "content-disposition",
  "response-content-encoding": "content-encoding",
} as const;

/** The headers describing an object, as GET and HEAD send them. */
function objectHeaders(exchange: S3Exchange, object: ObjectInfo): void {
  const { response } = exchange;
  response.setHeader("content-type", object.contentType);
  response.setHeader("etag", quoted(object.etag));
  response.setHeader("last-modified", new Date(object.lastModified).toUTCString());
  response.setHeader("accept-ranges", "bytes");
  for (const [name, value] of Object.entries(object.metadata)) response.setHeader(`x-amz-meta-${name}`, value);
  for (const [param, name] of Object.entries(overrides)) {
    const value = exchange.query.get(param);
    if (value !== null && /^[\x20-\x7e]*$/.test(value)) response.setHeader(name, value);
  }
}

/**
 * RFC 9110's conditional requests as S3 applies them: If-Match and If-Unmodified-Since fail with
 * 412, If-None-Match and If-Modified-Since answer 304; a passing If-Match overrides a failing
 * If-Unmodified-Since, and a failing If-None-Match overrides a passing If-Modified-Since.
 */
function preconditions(exchange: S3Exchange, object: ObjectInfo): 200 | 304 | 412 {
  const etagMatches = (list: string) =>
    list.split(",").some((tag) => {
      const t = tag.trim().replace(/^W\//, "");
      return t === "*" || t.replaceAll('"', "") === object.etag;
    });
  // HTTP dates have whole seconds.
  const modified = Math.floor(object.lastModified / 1000) * 1000;
  const ifMatch = header(exchange, "if-match");
  const ifUnmodifiedSince = Date.parse(header(exchange, "if-unmodified-since") ?? "");
  const ifNoneMatch = header(exchange, "if-none-match");
  const ifModifiedSince = Date.parse(header(exchange, "if-modified-since") ?? "");
  if (ifMatch !== undefined) {
    if (!etagMatches(ifMatch)) return 412;
  } else if (!Number.isNaN(ifUnmodifiedSince) && modified > ifUnmodifiedSince) return 412;
  if (ifNoneMatch !== undefined) {
    if (etagMatches(ifNoneMatch)) return 304;
  } else if (!Number.isNaN(ifModifiedSince) && modified <= ifModifiedSince) return 304;
  return 200;
}

export function createObjectOperations(directory: BucketDirectory) {
  return {
    async getObject(exchange: S3Exchange, head: boolean) {
      const { orgId } = exchange.caller;
      const object = await directory.readObject(orgId, exchange.bucket, exchange.key);
      if (!object) throw noSuchKey(exchange.key);
      const { response } = exchange;
      try {
        const condition = preconditions(exchange, object);
        if (condition === 412)
          throw new S3Error("PreconditionFailed", "at least one of the preconditions you specified did not hold", {
            Condition: "If-Match",
          });
        if (condition === 304) {
          response.setHeader("etag", quoted(object.etag));
          response.setHeader("last-modified", new Date(object.lastModified).toUTCString());
          return sendEmpty(exchange, 304);
        }
        const range = parseByteRange(header(exchange, "range"), object.size);
        if (range.kind === "unsatisfiable") {
          response.setHeader("content-range", `bytes */${object.size}`);
          throw new S3Error("InvalidRange", "the requested range is not satisfiable", {
            RangeRequested: header(exchange, "range") ?? "",
            ActualObjectSize: String(object.size),
          });
        }
        objectHeaders(exchange, object);
        if (range.kind === "range") {
          response.statusCode = 206;
          response.setHeader("content-range", `bytes ${range.start}-${range.end}/${object.size}`);
          response.setHeader("content-length", String(range.end - range.start + 1));
        } else {
          response.statusCode = 200;
          response.setHeader("content-length", String(object.size));
        }
        if (head || object.size === 0) {
          response.end();
          return;
        }
        // Streamed from the blob, never held whole; a client that goes away ends the read.
        await pipeline(object.blob.read(range.kind === "range" ? range : undefined), response);
      } finally {
        await object.blob.close();
      }
    },

    async putObject(exchange: S3Exchange) {
      const metadata = metadataOf(exchange);
      const contentType = contentTypeOf(exchange);
      const info = await directory.putObject(exchange.caller.orgId, exchange.bucket, exchange.key, exchange.body(), {
        contentType,
        metadata,
      });
      sendEmpty(exchange, 200, { etag: quoted(info.etag) });
    },

    async deleteObject(exchange: S3Exchange) {
      await directory.deleteObject(exchange.caller.orgId, exchange.bucket, exchange.key);
      sendEmpty(exchange, 204);
    },

    /** CopyObject: `x-amz-copy-source` is `[/]bucket/key` (URL-encoded), in the caller's organization. */
    async copyObject(exchange: S3Exchange, copySource: string) {
      const source = parseCopySource(copySource);
      for await (const _chunk of exchange.body());
      const directive = (header(exchange, "x-amz-metadata-directive") ?? "COPY").toUpperCase();
      if (directive !== "COPY" && directive !== "REPLACE")
        throw new S3Error("InvalidArgument", "x-amz-metadata-directive: must be COPY or REPLACE");
      if (directive === "COPY" && source.bucket === exchange.bucket && source.key === exchange.key)
        throw new S3Error(
          "InvalidRequest",
          "this copy request is illegal because it is trying to copy an object to itself without changing the object's metadata",
        );
      const replaced =
        directive === "REPLACE" ? { contentType: contentTypeOf(exchange), metadata: metadataOf(exchange) } : undefined;
      const info = await directory.copyObject(
        exchange.caller.orgId,
        source,
        { bucket: exchange.bucket, key: exchange.key },
        (from) => replaced ?? { contentType: from.contentType, metadata: from.metadata },
      );
      sendXml(exchange, 200, "CopyObjectResult", (xml) =>
        xml.text("LastModified", isoTime(info.lastModified)).text("ETag", quoted(info.etag)),
      );
    },
  };
}

export function parseCopySource(value: string): { bucket: string; key: string } {
  const path = value.split("?", 1)[0]!.replace(/^\//, "");
  const slash = path.indexOf("/");
  let bucket: string;
  let key: string;
  try {
    bucket = decodeURIComponent(path.slice(0, slash));
    key = decodeURIComponent(path.slice(slash + 1));
  } catch {
    throw new S3Error("InvalidArgument", "x-amz-copy-source: not a URL-encoded bucket/key");
  }
  if (slash <= 0 || key === "") throw new S3Error("InvalidArgument", "x-amz-copy-source: must be bucket/key");
  return { bucket, key };
}
