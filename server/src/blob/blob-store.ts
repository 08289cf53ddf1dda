import type { Readable, Writable } from "node:stream";

/** What a stored object says about itself. */
export interface BlobInfo {
  readonly key: string;
  /** Length of the content in bytes. */
  readonly size: number;
  readonly contentType: string;
  /** Lower-case hex SHA-256 of the content: the object's entity tag and integrity check. */
  readonly sha256: string;
  /** When this version of the object was written, in epoch milliseconds. */
  readonly updatedAt: number;
}

/** An object as a listing names it. */
export interface ListedBlob {
  readonly key: string;
  /** When this version of the object was written, in epoch milliseconds. */
  readonly updatedAt: number;
}

/** A byte range, both ends included, as HTTP counts them. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * One version of an object, opened for reading. Its description and its bytes come from the same
 * version, even when the object is replaced meanwhile, so a download never mixes two writes.
 */
export interface OpenBlob extends BlobInfo {
  /** The content, or `range` of it. Call once; the stream releases the object when it ends or is destroyed. */
  read(range?: ByteRange): Readable;
  /**
   * Writes the content, or `range` of it, to `destination` (an HTTP response) and ends it; rejects
   * with ERR_STREAM_PREMATURE_CLOSE when the destination closes first. Call once, instead of read():
   * it releases the object when done. Unlike read(), a store may hand the destination buffers it
   * reuses once the destination has written them, which spares the garbage collector a fresh
   * buffer per chunk on large downloads.
   */
  sendTo(destination: Writable, range?: ByteRange): Promise<void>;
  /** Releases the object without reading it (a HEAD, a 304 or a 416); harmless after read(). */
  close(): Promise<void>;
}

/**
 * Object storage, as little of it as the platform needs: whole-object writes that replace
 * atomically, reads of a version with ranges, and deletes. Keys follow checkBlobKey. The filesystem
 * store implements it for a single machine (and several processes sharing a volume); an
 * S3-compatible store implements the same interface for production.
 */
export interface BlobStore {
  /** Stores `bytes` under `key`, replacing any previous object at once: readers see the old or the new, never a mix. */
  put(key: string, bytes: Uint8Array, options: { readonly contentType: string }): Promise<BlobInfo>;
  /**
   * Stores what `source` yields under `key`, as `put` does, without holding it in memory: the
   * object appears whole when the source ends, and not at all when it fails.
   */
  write(
    key: string,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: { readonly contentType: string },
  ): Promise<BlobInfo>;
  /** The object, opened for reading, or undefined when there is none. */
  open(key: string): Promise<OpenBlob | undefined>;
  /** The object's description, or undefined when there is none. */
  stat(key: string): Promise<BlobInfo | undefined>;
  /** Deletes one object; answers whether it existed. */
  delete(key: string): Promise<boolean>;
  /** Deletes every object whose key starts with `prefix`, a folder ending in `/` (`threads/<id>/`). */
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Every object whose key starts with `prefix` (a folder ending in `/`), in no particular order,
   * read as the listing goes: objects written or deleted meanwhile may or may not appear.
   */
  list(prefix: string): AsyncIterable<ListedBlob>;
  /**
   * Deletes what writes that never finished left behind (the process stopped mid-write), when it
   * was last touched before `olderThan` (epoch milliseconds); answers how many were deleted. A
   * write still in progress is younger than any sensible cutoff.
   */
  sweepAbandonedWrites(olderThan: number): Promise<number>;
}
