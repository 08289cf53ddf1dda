import { holdsRole } from "../../../auth/roles.js";
import type { Logger } from "../../../log/logger.js";
import type { NodeRequest, NodeRequestHandler, NodeResponse } from "../../../transport/plane-handler.js";
import type { BucketDirectory } from "../bucket-directory.js";
import type { MultipartUploads } from "../multipart-uploads.js";
import { createBucketOperations } from "./s3-bucket-operations.js";
import type { S3Credentials } from "./s3-credentials.js";
import { S3Error } from "./s3-error.js";
import { sendError, type S3Exchange } from "./s3-exchange.js";
import { createMultipartOperations } from "./s3-multipart-operations.js";
import { createObjectOperations } from "./s3-object-operations.js";
import { requestBody } from "./s3-request-body.js";
import { checkRequestTime, readSignatureClaim, verifySignature } from "./sigv4.js";

export interface S3HandlerOptions {
  readonly directory: BucketDirectory;
  readonly uploads: MultipartUploads;
  readonly credentials: S3Credentials;
  readonly logger: Logger;
  readonly now?: () => number;
}

/** Which organization-wide role an operation needs: reads `data.viewer`, changes `data.editor` (or higher, or owner). */
type Access = "read" | "write";
const roleFor: Record<Access, string> = { read: "data.viewer", write: "data.editor" };

interface Operation {
  readonly name: string;
  readonly access: Access;
  run(exchange: S3Exchange): Promise<void>;
}

/**
 * The S3-compatible API, path-style (`/<bucket>/<key>`), on a listener of its own. Every request
 * is signed with SigV4 by an organization API key's S3 credentials (s3-secret.ts) and acts in that
 * key's organization: a bucket of another organization is NoSuchBucket. Roles are the data plane's:
 * `data.viewer` reads (list, get, head), `data.editor` also writes (create and delete buckets, put,
 * copy, delete objects, multipart uploads); `owner` does both.
 */
export function createS3Handler(options: S3HandlerOptions): NodeRequestHandler {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const buckets = createBucketOperations(options.directory);
  const objects = createObjectOperations(options.directory);
  const multipart = createMultipartOperations(options.uploads);

  function route(method: string, bucket: string, key: string, query: URLSearchParams, request: NodeRequest): Operation {
    const op = (name: string, access: Access, run: (exchange: S3Exchange) => Promise<void>): Operation => ({
      name,
      access,
      run,
    });
    const notImplemented = (what: string) => new S3Error("NotImplemented", `${what} is not implemented by this server`);
    if (bucket === "") {
      if (method === "GET") return op("ListBuckets", "read", buckets.listBuckets);
      throw new S3Error("MethodNotAllowed", "the specified method is not allowed against this resource");
    }
    if (key === "") {
      const subresource = ["acl", "cors", "lifecycle", "policy", "tagging", "versioning", "website", "encryption"].find(
        (s) => query.has(s),
      );
      if (subresource) throw notImplemented(`the bucket subresource ?${subresource}`);
      switch (method) {
        case "PUT":
          return op("CreateBucket", "write", buckets.createBucket);
        case "HEAD":
          return op("HeadBucket", "read", buckets.headBucket);
        case "DELETE":
          return op("DeleteBucket", "write", buckets.deleteBucket);
        case "POST":
          if (query.has("delete")) return op("DeleteObjects", "write", buckets.deleteObjects);
          break;
        case "GET":
          if (query.has("location")) return op("GetBucketLocation", "read", buckets.getBucketLocation);
          if (query.has("uploads")) return op("ListMultipartUploads", "read", multipart.listUploads);
          if (query.has("versions")) throw notImplemented("ListObjectVersions");
          if (query.get("list-type") === "2") return op("ListObjectsV2", "read", buckets.listObjectsV2);
          return op("ListObjects", "read", buckets.listObjectsV1);
      }
      throw new S3Error("MethodNotAllowed", "the specified method is not allowed against this resource");
    }
    const uploadId = query.has("uploadId");
    for (const s of ["acl", "tagging", "retention", "legal-hold", "torrent", "restore", "attributes"])
      if (query.has(s)) throw notImplemented(`the object subresource ?${s}`);
    switch (method) {
      case "PUT": {
        const copySource = request.headers["x-amz-copy-source"];
        if (uploadId) {
          if (copySource !== undefined) throw notImplemented("UploadPartCopy");
          return op("UploadPart", "write", multipart.uploadPart);
        }
        if (typeof copySource === "string")
          return op("CopyObject", "write", (exchange) => objects.copyObject(exchange, copySource));
        return op("PutObject", "write", objects.putObject);
      }
      case "GET":
        if (uploadId) return op("ListParts", "read", multipart.listParts);
        return op("GetObject", "read", (exchange) => objects.getObject(exchange, false));
      case "HEAD":
        return op("HeadObject", "read", (exchange) => objects.getObject(exchange, true));
      case "DELETE":
        if (uploadId) return op("AbortMultipartUpload", "write", multipart.abort);
        return op("DeleteObject", "write", objects.deleteObject);
      case "POST":
        if (query.has("uploads")) return op("CreateMultipartUpload", "write", multipart.create);
        if (uploadId) return op("CompleteMultipartUpload", "write", multipart.complete);
        break;
    }
    throw new S3Error("MethodNotAllowed", "the specified method is not allowed against this resource");
  }

  async function serve(request: NodeRequest, response: NodeResponse, requestId: string): Promise<void> {
    const method = (request.method ?? "GET").toUpperCase();
    const url = request.url ?? "/";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const rawQuery = queryAt === -1 ? "" : url.slice(queryAt + 1);
    const query = new URLSearchParams(rawQuery);
    const { bucket, key } = splitPath(path);
    const claim = readSignatureClaim({ method, path, query: rawQuery, headers: request.headers });
    checkRequestTime(claim, now());
    const caller = await options.credentials.resolve(claim.accessKeyId);
    const signingKey = verifySignature(
      { method, path, query: rawQuery, headers: request.headers },
      claim,
      caller.secretAccessKey,
    );
    await caller.markUsed();

    // PostgreSQL text cannot hold NUL: refused here, naming where it was, before any lookup.
    if (bucket.includes("\0") || key.includes("\0")) throw new S3Error("InvalidArgument", "path: must not contain NUL");
    for (const [name, value] of query)
      if (value.includes("\0") || name.includes("\0"))
        throw new S3Error("InvalidArgument", `${name.replaceAll("\0", "")}: must not contain NUL`);
    const operation = route(method, bucket, key, query, request);
    const needed = roleFor[operation.access];
    if (!holdsRole(caller.principal.roles, needed))
      throw new S3Error(
        "AccessDenied",
        `${operation.name} needs the role ${needed} (or a higher one, or owner) on this API key`,
      );
    await operation.run({
      request,
      response,
      method,
      bucket,
      key,
      query,
      caller: caller.principal,
      requestId,
      body: () => requestBody(request, claim, signingKey),
    });
  }

  return (request, response) => {
    const requestId = String(request.headers["x-request-id"] ?? "");
    response.setHeader("x-amz-request-id", requestId);
    serve(request, response, requestId).catch((error: unknown) => {
      const method = (request.method ?? "GET").toUpperCase();
      if (response.headersSent) {
        // The answer was under way (a download the client left): only the connection can say so.
        if (!(error instanceof S3Error)) logger.warn("s3 response cut", { requestId, error });
        response.destroy();
        return;
      }
      let s3Error: S3Error;
      if (error instanceof S3Error) s3Error = error;
      else {
        logger.error("s3 request failed", { requestId, method, error });
        s3Error = new S3Error(
          "InternalError",
          `we encountered an internal error (request ${requestId}); please try again`,
        );
      }
      // A refusal before the body was read: over HTTP/1.1 the connection cannot be reused.
      if (!request.readableEnded && request.httpVersionMajor === 1) response.setHeader("connection", "close");
      sendError(response, method, s3Error, (request.url ?? "/").split("?", 1)[0]!, requestId);
    });
  };
}

/** `/<bucket>/<key…>` with the key percent-decoded whole (an encoded `/` is part of it). */
export function splitPath(path: string): { bucket: string; key: string } {
  const rest = path.replace(/^\/+/, "");
  const slash = rest.indexOf("/");
  const decode = (value: string) => {
    try {
      return decodeURIComponent(value);
    } catch {
      throw new S3Error("InvalidArgument", "the request path is not valid percent-encoding");
    }
  };
  if (slash === -1) return { bucket: decode(rest), key: "" };
  return { bucket: decode(rest.slice(0, slash)), key: decode(rest.slice(slash + 1)) };
}
