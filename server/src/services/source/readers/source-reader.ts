import type { Readable } from "node:stream";

/**
 * One interface over every kind of source, for the ingestion code: list what is there, then read
 * one object as a stream. Keys are what the kind calls an object: an object key for stores, the
 * URL itself for web sources.
 */
export interface SourceReader {
  /** Every object of the source (under its prefix), in the kind's own order. */
  discover(signal?: AbortSignal): AsyncIterable<SourceObject>;
  /** One object's bytes; SourceReadError `not_found` when the key is not (or no longer) there. */
  read(key: string, signal?: AbortSignal): Promise<SourceObjectBody>;
}

export interface SourceObject {
  readonly key: string;
  /** Bytes; undefined when the source does not say (a web server without Content-Length). */
  readonly size: number | undefined;
  /** Changes whenever the content does: the store's ETag, or a web server's ETag or Last-Modified; empty when unknown. */
  readonly etag: string;
  /** The store's version id where it keeps versions; empty otherwise. */
  readonly version: string;
  /** Media type as the source declares it; empty when unknown. */
  readonly contentType: string;
  /** Epoch milliseconds; undefined when unknown. */
  readonly lastModified: number | undefined;
}

export interface SourceObjectBody {
  readonly body: Readable;
  readonly size: number | undefined;
  readonly contentType: string;
  readonly etag: string;
}

/**
 * The bucket's own objects, as the storage service lists and reads them. The source service only
 * holds this interface: the storage service hands its implementation to createSourceReaders.
 */
export interface InternalObjects {
  list(orgId: string, bucket: string, prefix: string, signal?: AbortSignal): AsyncIterable<SourceObject>;
  read(orgId: string, bucket: string, key: string, signal?: AbortSignal): Promise<SourceObjectBody>;
}

/**
 * Why a source could not be read, as the ingestion code needs to tell it apart: `not_found` (the
 * object is gone: skip it), `credential` (missing, unopenable or rejected: the source is in error
 * until fixed), `refused` (the outbound guard refused the address), `unavailable` (network or the
 * far side failing: retry later). The message names no secret.
 */
export class SourceReadError extends Error {
  override readonly name = "SourceReadError";
  constructor(
    readonly kind: "not_found" | "credential" | "refused" | "unavailable",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
