import type { MultipartUploads } from "../multipart-uploads.js";
import { S3Error } from "./s3-error.js";
import { contentTypeOf, integerParam, metadataOf, quoted, sendEmpty, sendXml, type S3Exchange } from "./s3-exchange.js";
import { parseXmlBody } from "./s3-bucket-operations.js";
import { readSmallBody } from "./s3-request-body.js";
import { isoTime } from "./s3-xml.js";

export function createMultipartOperations(uploads: MultipartUploads) {
  const uploadIdOf = (exchange: S3Exchange) => exchange.query.get("uploadId") ?? "";

  return {
    async create(exchange: S3Exchange) {
      const put = { contentType: contentTypeOf(exchange), metadata: metadataOf(exchange) };
      for await (const _chunk of exchange.body());
      const upload = await uploads.create(exchange.caller.orgId, exchange.bucket, exchange.key, put);
      sendXml(exchange, 200, "InitiateMultipartUploadResult", (xml) =>
        xml.text("Bucket", exchange.bucket).text("Key", exchange.key).text("UploadId", upload.uploadId),
      );
    },

    async uploadPart(exchange: S3Exchange) {
      const text = exchange.query.get("partNumber") ?? "";
      if (!/^[0-9]{1,5}$/.test(text))
        throw new S3Error("InvalidArgument", "partNumber: must be an integer from 1 to 10000");
      const part = await uploads.uploadPart(
        exchange.caller.orgId,
        exchange.bucket,
        exchange.key,
        uploadIdOf(exchange),
        Number(text),
        exchange.body(),
      );
      sendEmpty(exchange, 200, { etag: quoted(part.etag) });
    },

    async complete(exchange: S3Exchange) {
      const body = parseXmlBody<{ Part?: { PartNumber?: unknown; ETag?: unknown }[] }>(
        await readSmallBody(exchange.body()),
        "CompleteMultipartUpload",
      );
      const parts = (body.Part ?? []).map((part) => {
        const number = String(part?.PartNumber ?? "").trim();
        if (!/^[0-9]{1,5}$/.test(number) || typeof part.ETag !== "string")
          throw new S3Error("MalformedXML", "every Part needs a PartNumber and an ETag");
        return { partNumber: Number(number), etag: part.ETag.trim() };
      });
      const info = await uploads.complete(
        exchange.caller.orgId,
        exchange.bucket,
        exchange.key,
        uploadIdOf(exchange),
        parts,
      );
      sendXml(exchange, 200, "CompleteMultipartUploadResult", (xml) =>
        xml
          .text("Location", `/${exchange.bucket}/${encodeURIComponent(exchange.key)}`)
          .text("Bucket", exchange.bucket)
          .text("Key", exchange.key)
          .text("ETag", quoted(info.etag)),
      );
    },

    async abort(exchange: S3Exchange) {
      await uploads.abort(exchange.caller.orgId, exchange.bucket, exchange.key, uploadIdOf(exchange));
      sendEmpty(exchange, 204);
    },

    async listParts(exchange: S3Exchange) {
      const after = integerParam(exchange, "part-number-marker", 0, 10_000);
      const maxParts = integerParam(exchange, "max-parts", 1000, 1000);
      const uploadId = uploadIdOf(exchange);
      const { parts, isTruncated } = await uploads.listParts(
        exchange.caller.orgId,
        exchange.bucket,
        exchange.key,
        uploadId,
        {
          after,
          maxParts,
        },
      );
      sendXml(exchange, 200, "ListPartsResult", (xml) => {
        xml
          .text("Bucket", exchange.bucket)
          .text("Key", exchange.key)
          .text("UploadId", uploadId)
          .text("PartNumberMarker", after)
          .text("NextPartNumberMarker", parts.length > 0 ? parts[parts.length - 1]!.partNumber : undefined)
          .text("MaxParts", maxParts)
          .text("IsTruncated", isTruncated)
          .text("StorageClass", "STANDARD");
        for (const part of parts)
          xml.element("Part", () =>
            xml
              .text("PartNumber", part.partNumber)
              .text("LastModified", isoTime(part.lastModified))
              .text("ETag", quoted(part.etag))
              .text("Size", part.size),
          );
      });
    },

    async listUploads(exchange: S3Exchange) {
      const { query } = exchange;
      const prefix = query.get("prefix") ?? "";
      const keyMarker = query.get("key-marker") ?? "";
      const uploadIdMarker = query.get("upload-id-marker") ?? "";
      const maxUploads = integerParam(exchange, "max-uploads", 1000, 1000);
      const { uploads: listed, isTruncated } = await uploads.listUploads(exchange.caller.orgId, exchange.bucket, {
        prefix,
        keyMarker,
        uploadIdMarker,
        maxUploads,
      });
      const last = listed[listed.length - 1];
      sendXml(exchange, 200, "ListMultipartUploadsResult", (xml) => {
        xml
          .text("Bucket", exchange.bucket)
          .text("KeyMarker", keyMarker)
          .text("UploadIdMarker", uploadIdMarker)
          .text("NextKeyMarker", isTruncated ? last?.key : undefined)
          .text("NextUploadIdMarker", isTruncated ? last?.uploadId : undefined)
          .text("Prefix", prefix)
          .text("MaxUploads", maxUploads)
          .text("IsTruncated", isTruncated);
        for (const upload of listed)
          xml.element("Upload", () =>
            xml
              .text("Key", upload.key)
              .text("UploadId", upload.uploadId)
              .text("Initiated", isoTime(upload.createdAt))
              .text("StorageClass", "STANDARD"),
          );
      });
    },
  };
}
