import { createHash, randomBytes } from "node:crypto";
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { BlobKeyError, checkBlobKey, checkBlobPrefix, checkContentType } from "./blob-key.js";
import type { BlobInfo, BlobStore, ListedBlob, OpenBlob } from "./blob-store.js";

/** Part size of multipart uploads: also the largest object written in one PutObject. */
const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/** Parts in flight at once; memory held by one write is about (queue + 1) parts. */
const DEFAULT_QUEUE_SIZE = 2;
/** Where multipart uploads are staged until their hash is known; no object key may start so. */
const STAGING_FOLDER = ".uploads/";
/** DeleteObjects takes at most this many keys; ListObjectsV2 answers at most this many. */
const DELETE_BATCH = 1000;

export interface S3BlobStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Folder inside the bucket every key is stored under (`platform/`); empty uses the whole bucket. */
  readonly prefix?: string;
  readonly partBytes?: number;
  readonly queueSize?: number;
}

/**
 * The object store on an S3-compatible service. Each object carries its content type and, in
 * `x-amz-meta-sha256`, the hash of its content.
 *
 * The hash is only known once the content has been read, but S3 fixes an object's metadata when
 * it is created. Small objects (one part) are therefore buffered and written with one PutObject;
 * larger ones are uploaded in parts to a staging key, then copied server-side to their key with
 * the hash in their metadata. Staging keys live in the top-level folder `.uploads/`, which the
 * store refuses as a key (the platform's own top-level folders are fixed names), so they never
 * collide with an object or fall under a deletePrefix. (An empty segment would also be safe from
 * collisions, but several S3-compatible servers mishandle `//` in a path.)
 * A failed write aborts its multipart upload and leaves no object behind.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { client, bucket } = options;
  const root = options.prefix ? checkBlobPrefix(options.prefix) : "";
  const partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
  const queueSize = options.queueSize ?? DEFAULT_QUEUE_SIZE;
  const objectKey = (key: string) => {
    if (checkBlobKey(key).startsWith(STAGING_FOLDER)) {
      throw new BlobKeyError(
        `object key ${JSON.stringify(key.slice(0, 80))} is in the reserved folder ${STAGING_FOLDER}`,
      );
    }
    return `${root}${key}`;
  };

  async function head(key: string): Promise<HeadObjectCommandOutput | undefined> {
    try {
      return await client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async function stat(key: string): Promise<BlobInfo | undefined> {
    const output = await head(key);
    return output && describe(key, output);
  }

  async function write(
    key: string,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: { readonly contentType: string },
  ): Promise<BlobInfo> {
    const target = objectKey(key);
    const contentType = checkContentType(options.contentType);
    const hash = createHash("sha256");
    const iterator = toAsyncIterator(source);

    // The first part decides: a source that ends within it is written with one PutObject.
    const first: Uint8Array[] = [];
    let buffered = 0;
    let ended = false;
    while (buffered < partBytes) {
      const next = await iterator.next();
      if (next.done) {
        ended = true;
        break;
      }
      first.push(next.value);
      buffered += next.value.byteLength;
      hash.update(next.value);
    }
    if (ended) {
      const body = Buffer.concat(first);
      const sha256 = hash.digest("hex");
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: target,
          Body: body,
          ContentType: contentType,
          Metadata: { sha256 },
        }),
      );
      return (await stat(key)) ?? { key, size: body.byteLength, contentType, sha256, updatedAt: Date.now() };
    }

    let size = 0;
    let sourceError: unknown;
    async function* hashed(): AsyncGenerator<Uint8Array> {
      for (const chunk of first) {
        size += chunk.byteLength;
        yield chunk;
      }
      first.length = 0;
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          hash.update(next.value);
          size += next.value.byteLength;
          yield next.value;
        }
      } catch (error) {
        sourceError = error;
        throw error;
      }
    }
    const staging = `${root}${STAGING_FOLDER}${randomBytes(12).toString("hex")}`;
    const upload = new Upload({
      client,
      params: { Bucket: bucket, Key: staging, Body: Readable.from(hashed(), { objectMode: false }) },
      partSize: partBytes,
      queueSize,
      // Aborts the multipart upload when a part or the source fails: nothing stays behind.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // The source's failure is the cause, even when aborting the upload failed as well.
      throw sourceError ?? error;
    }
    try {
      const sha256 = hash.digest("hex");
      await client.send(
        new CopyObjectCommand({
          Bucket: bucket,
          Key: target,
          CopySource: `${bucket}/${staging.split("/").map(encodeURIComponent).join("/")}`,
          MetadataDirective: "REPLACE",
          ContentType: contentType,
          Metadata: { sha256 },
        }),
      );
      return (await stat(key)) ?? { key, size, contentType, sha256, updatedAt: Date.now() };
    } finally {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: staging }));
    }
  }

  return {
    put: (key, bytes, options) => write(key, [bytes], options),

    write,

    async open(key): Promise<OpenBlob | undefined> {
      const output = await head(key);
      if (!output) return undefined;
      const info = describe(key, output);
      const etag = output.ETag;
      const blob: OpenBlob = {
        ...info,
        read(range) {
          const stream = new PassThrough();
          // Pinned to the version described: a replaced object fails with 412 instead of mixing versions.
          client
            .send(
              new GetObjectCommand({
                Bucket: bucket,
                Key: objectKey(key),
                ...(etag ? { IfMatch: etag } : {}),
                ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
              }),
            )
            .then((response) => pipeline(response.Body as Readable, stream))
            .catch((error: unknown) => {
              stream.destroy(
                isPreconditionFailed(error)
                  ? new Error(`object ${JSON.stringify(key)} was replaced while it was read`)
                  : (error as Error),
              );
            });
          return stream;
        },
        sendTo: (destination, range) => pipeline(blob.read(range), destination),
        async close() {},
      };
      return blob;
    },

    stat,

    async delete(key) {
      if (!(await head(key))) return false;
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
      return true;
    },

    async deletePrefix(prefix) {
      for await (const page of listPages(folderOf(prefix))) await deleteObjects(page, prefix);
    },

    async *list(prefix): AsyncGenerator<ListedBlob> {
      for await (const page of listPages(folderOf(prefix))) {
        for (const object of page) {
          yield { key: object.Key.slice(root.length), updatedAt: object.LastModified?.getTime() ?? 0 };
        }
      }
    },

    // A staging object outlives its write when the process stopped between the multipart upload
    // and the copy to its key. (A multipart upload the process left unfinished is not an object:
    // the bucket's lifecycle rule for incomplete multipart uploads removes it.)
    async sweepAbandonedWrites(olderThan) {
      let deleted = 0;
      for await (const page of listPages(`${root}${STAGING_FOLDER}`)) {
        const abandoned = page.filter((object) => (object.LastModified?.getTime() ?? olderThan) < olderThan);
        await deleteObjects(abandoned, STAGING_FOLDER);
        deleted += abandoned.length;
      }
      return deleted;
    },
  };

  /** The bucket folder of a store prefix. */
  function folderOf(prefix: string): string {
    return `${root}${checkBlobPrefix(prefix)}`;
  }

  /** Deletes one listed page of objects (at most DELETE_BATCH) in one request. */
  async function deleteObjects(objects: readonly { Key: string }[], under: string): Promise<void> {
    if (objects.length === 0) return;
    const result = await client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: objects.map(({ Key }) => ({ Key })), Quiet: true },
      }),
    );
    if (result.Errors?.length) {
      throw new Error(`deleting under ${JSON.stringify(under)} failed for ${result.Errors.length} objects`);
    }
  }

  /** The bucket's objects under `folder` (the store's root included), a page at a time. */
  async function* listPages(folder: string): AsyncGenerator<{ Key: string; LastModified?: Date }[]> {
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: folder, ContinuationToken: token, MaxKeys: DELETE_BATCH }),
      );
      yield (page.Contents ?? []).flatMap((object) => (object.Key ? [{ ...object, Key: object.Key }] : []));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function describe(key: string, output: HeadObjectCommandOutput): BlobInfo {
  const sha256 = output.Metadata?.sha256;
  if (!sha256)
    throw new Error(`object ${JSON.stringify(key)} has no sha256 metadata: it was not written by this store`);
  return {
    key,
    size: output.ContentLength ?? 0,
    contentType: output.ContentType ?? "application/octet-stream",
    sha256,
    updatedAt: output.LastModified?.getTime() ?? 0,
  };
}

function toAsyncIterator(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in source) return source[Symbol.asyncIterator]();
  const iterator = source[Symbol.iterator]();
  return { next: () => Promise.resolve(iterator.next()) };
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function isMissing(error: unknown): boolean {
  return statusOf(error) === 404 || (error as Error).name === "NotFound" || (error as Error).name === "NoSuchKey";
}

function isPreconditionFailed(error: unknown): boolean {
  return statusOf(error) === 412 || (error as Error).name === "PreconditionFailed";
}
