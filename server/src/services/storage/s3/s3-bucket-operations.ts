import { XMLParser } from "fast-xml-parser";
import type { BucketDirectory } from "../bucket-directory.js";
import type { ObjectListing } from "../object-listing.js";
import { S3Error } from "./s3-error.js";
import { integerParam, quoted, sendEmpty, sendXml, type S3Exchange } from "./s3-exchange.js";
import { readSmallBody } from "./s3-request-body.js";
import { isoTime, type XmlWriter } from "./s3-xml.js";
import { awsUriEncode } from "./sigv4.js";

/** The region every bucket reports; S3 writes us-east-1 as an empty LocationConstraint. */
export const S3_REGION = "us-east-1";
const MAX_KEYS = 1000;

const xmlParser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  isArray: (name) => name === "Object" || name === "Part",
  processEntities: true,
});

/** Parses a request's XML body; MalformedXML when it is not XML of the expected root. */
export function parseXmlBody<T>(text: string, root: string): T {
  let parsed: Record<string, unknown>;
  try {
    parsed = xmlParser.parse(text, true) as Record<string, unknown>;
  } catch {
    throw new S3Error(
      "MalformedXML",
      "the XML you provided was not well-formed or did not validate against our published schema",
    );
  }
  const value = parsed[root];
  if (value === undefined || typeof value !== "object" || value === null)
    throw new S3Error("MalformedXML", `the XML body must have the root element ${root}`);
  return value as T;
}

export function createBucketOperations(directory: BucketDirectory) {
  return {
    async listBuckets(exchange: S3Exchange) {
      const buckets = await directory.listBuckets(exchange.caller.orgId);
      sendXml(exchange, 200, "ListAllMyBucketsResult", (xml) => {
        xml.element("Owner", () => xml.text("ID", exchange.caller.orgId).text("DisplayName", exchange.caller.orgName));
        xml.element("Buckets", () => {
          for (const bucket of buckets)
            xml.element("Bucket", () => xml.text("Name", bucket.name).text("CreationDate", isoTime(bucket.createdAt)));
        });
      });
    },

    async createBucket(exchange: S3Exchange) {
      // A CreateBucketConfiguration body (a location constraint) is read and ignored: one region.
      for await (const _chunk of exchange.body());
      await directory.createBucket(exchange.caller.orgId, exchange.bucket);
      sendEmpty(exchange, 200, { location: `/${exchange.bucket}` });
    },

    async headBucket(exchange: S3Exchange) {
      await directory.requireBucket(exchange.caller.orgId, exchange.bucket);
      sendEmpty(exchange, 200, { "x-amz-bucket-region": S3_REGION });
    },

    async deleteBucket(exchange: S3Exchange) {
      await directory.deleteBucket(exchange.caller.orgId, exchange.bucket);
      sendEmpty(exchange, 204);
    },

    async getBucketLocation(exchange: S3Exchange) {
      await directory.requireBucket(exchange.caller.orgId, exchange.bucket);
      sendXml(exchange, 200, "LocationConstraint", () => {});
    },

    async listObjectsV2(exchange: S3Exchange) {
      const { query } = exchange;
      const prefix = query.get("prefix") ?? "";
      const delimiter = query.get("delimiter") ?? "";
      const maxKeys = integerParam(exchange, "max-keys", MAX_KEYS, MAX_KEYS);
      const token = query.get("continuation-token");
      const startAfter = query.get("start-after") ?? "";
      let after = startAfter;
      if (token !== null) {
        after = Buffer.from(token, "base64url").toString("utf8");
        if (token === "" || after.includes("\0") || Buffer.from(after, "utf8").toString("base64url") !== token)
          throw new S3Error("InvalidArgument", "continuation-token: not a token this listing returned");
      }
      const listing = await directory.listObjects(exchange.caller.orgId, exchange.bucket, {
        prefix,
        delimiter,
        after,
        maxKeys,
      });
      const encode = encoderOf(exchange);
      sendXml(exchange, 200, "ListBucketResult", (xml) => {
        xml
          .text("Name", exchange.bucket)
          .text("Prefix", encode(prefix))
          .text("Delimiter", delimiter === "" ? undefined : encode(delimiter))
          .text("MaxKeys", maxKeys)
          .text("KeyCount", listing.objects.length + listing.commonPrefixes.length)
          .text("IsTruncated", listing.isTruncated)
          .text("ContinuationToken", token ?? undefined)
          .text(
            "NextContinuationToken",
            listing.isTruncated ? Buffer.from(listing.next).toString("base64url") : undefined,
          )
          .text("StartAfter", startAfter === "" ? undefined : encode(startAfter))
          .text("EncodingType", query.get("encoding-type") === "url" ? "url" : undefined);
        writeEntries(xml, listing, encode);
      });
    },

    async listObjectsV1(exchange: S3Exchange) {
      const { query } = exchange;
      const prefix = query.get("prefix") ?? "";
      const delimiter = query.get("delimiter") ?? "";
      const marker = query.get("marker") ?? "";
      const maxKeys = integerParam(exchange, "max-keys", MAX_KEYS, MAX_KEYS);
      const listing = await directory.listObjects(exchange.caller.orgId, exchange.bucket, {
        prefix,
        delimiter,
        after: marker,
        maxKeys,
      });
      const encode = encoderOf(exchange);
      sendXml(exchange, 200, "ListBucketResult", (xml) => {
        xml
          .text("Name", exchange.bucket)
          .text("Prefix", encode(prefix))
          .text("Marker", encode(marker))
          .text("NextMarker", listing.isTruncated ? encode(listing.next) : undefined)
          .text("MaxKeys", maxKeys)
          .text("Delimiter", delimiter === "" ? undefined : encode(delimiter))
          .text("IsTruncated", listing.isTruncated)
          .text("EncodingType", query.get("encoding-type") === "url" ? "url" : undefined);
        writeEntries(xml, listing, encode);
      });
    },

    /** DeleteObjects: up to 1000 keys; each answered as deleted (missing ones too, as S3 does). */
    async deleteObjects(exchange: S3Exchange) {
      const text = await readSmallBody(exchange.body());
      const parsed = parseXmlBody<{ Object?: { Key?: unknown }[]; Quiet?: unknown }>(text, "Delete");
      const objects = parsed.Object ?? [];
      if (objects.length === 0 || objects.length > 1000)
        throw new S3Error("MalformedXML", "Delete must list from 1 to 1000 objects");
      const keys = objects.map((object) => {
        if (typeof object?.Key !== "string") throw new S3Error("MalformedXML", "every Object of Delete needs a Key");
        return object.Key;
      });
      await directory.requireBucket(exchange.caller.orgId, exchange.bucket);
      const quiet = String(parsed.Quiet ?? "").trim() === "true";
      const results: { key: string; error?: S3Error }[] = [];
      for (const key of keys) {
        try {
          await directory.deleteObject(exchange.caller.orgId, exchange.bucket, key);
          results.push({ key });
        } catch (error) {
          if (!(error instanceof S3Error)) throw error;
          results.push({ key, error });
        }
      }
      sendXml(exchange, 200, "DeleteResult", (xml) => {
        for (const { key, error } of results) {
          if (error)
            xml.element("Error", () => xml.text("Key", key).text("Code", error.code).text("Message", error.message));
          else if (!quiet) xml.element("Deleted", () => xml.text("Key", key));
        }
      });
    },
  };
}

/** With `encoding-type=url`, keys and prefixes are sent URL-encoded (they may hold characters XML cannot). */
function encoderOf(exchange: S3Exchange): (value: string) => string {
  return exchange.query.get("encoding-type") === "url" ? (value) => awsUriEncode(value, true) : (value) => value;
}

function writeEntries(xml: XmlWriter, listing: ObjectListing, encode: (value: string) => string): void {
  for (const object of listing.objects) {
    xml.element("Contents", () =>
      xml
        .text("Key", encode(object.key))
        .text("LastModified", isoTime(object.lastModified))
        .text("ETag", quoted(object.etag))
        .text("Size", object.size)
        .text("StorageClass", "STANDARD"),
    );
  }
  for (const prefix of listing.commonPrefixes) xml.element("CommonPrefixes", () => xml.text("Prefix", encode(prefix)));
}
