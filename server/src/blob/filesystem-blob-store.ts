import { createHash, randomBytes } from "node:crypto";
import { lstat, mkdir, open, opendir, readdir, rename, rm, unlink, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { BlobKeyError, checkBlobKey, checkBlobPrefix, checkContentType } from "./blob-key.js";
import type { BlobInfo, BlobStore, ListedBlob, OpenBlob } from "./blob-store.js";
import { sendFileRange } from "./send-file.js";

/** Longest file name most filesystems take (NAME_MAX), in bytes. */
const NAME_MAX_BYTES = 255;
/** Ends every object's file name; no folder name can end so (see segmentName). */
const OBJECT_SUFFIX = "%blob";
/** The header line is JSON of a checked content type and a hash: far below this. */
const HEADER_READ_BYTES = 2048;
/** Bytes gathered before one write to the file: bounds memory per write in progress. */
const WRITE_BATCH_BYTES = 1024 * 1024;
/**
 * Bytes written between flushes to the disk started while the write goes on, so that the flush
 * before the rename waits only for the last of them: flushing a whole large object at the end
 * stalls each upload behind the disk for as long as that takes.
 */
const EARLY_FLUSH_BYTES = 8 * 1024 * 1024;
/** Bytes per read of an object's file: larger than the stream default of 64 KiB, for fewer reads and socket writes. */
const READ_CHUNK_BYTES = 1024 * 1024;

interface Header {
  readonly contentType: string;
  readonly sha256: string;
}

/**
 * The object store on a local filesystem (or a volume every process shares), rooted at `root`:
 * `objects/` holds one file per object at its key's path, `tmp/` the files being written.
 *
 * A write goes to a temporary file, is flushed, then renamed over the object's file: rename is
 * atomic, so a reader opens the old version or the new one, and a reader that opened the old one
 * keeps reading it. The content type and hash travel in the same file, on a JSON line before the
 * content, so that one rename changes all of it together (a sidecar file could disagree with the
 * content it describes). Object files end in `%blob` and `%` in key segments is written `%25`, so
 * an object `a` and an object `a/b` (a file and a folder of the same name) can both exist.
 */
export function createFilesystemBlobStore(root: string): BlobStore {
  const objects = join(root, "objects");
  const temporary = join(root, "tmp");

  const folderOf = (prefix: string): string =>
    join(objects, ...checkBlobPrefix(prefix).slice(0, -1).split("/").map(segmentName));

  const fileOf = (key: string): string => {
    const segments = checkBlobKey(key).split("/").map(segmentName);
    segments.push(`${segments.pop()!}${OBJECT_SUFFIX}`);
    for (const name of segments) {
      if (Buffer.byteLength(name) > NAME_MAX_BYTES) {
        throw new BlobKeyError(
          `object key ${JSON.stringify(key.slice(0, 80))} has a segment longer than the filesystem allows (${NAME_MAX_BYTES - OBJECT_SUFFIX.length} bytes)`,
        );
      }
    }
    return join(objects, ...segments);
  };

  async function openBlob(key: string): Promise<OpenBlob | undefined> {
    const handle = await unlessMissing(open(fileOf(key), "r"));
    if (!handle) return undefined;
    try {
      const [stats, { header, offset }] = await Promise.all([handle.stat(), readHeader(handle, key)]);
      let released = false;
      return {
        key,
        size: stats.size - offset,
        contentType: header.contentType,
        sha256: header.sha256,
        updatedAt: Math.floor(stats.mtimeMs),
        read(range) {
          released = true;
          return handle.createReadStream({
            start: offset + (range?.start ?? 0),
            ...(range ? { end: offset + range.end } : {}),
            highWaterMark: READ_CHUNK_BYTES,
            autoClose: true,
          });
        },
        sendTo(destination, range) {
          released = true;
          const start = offset + (range?.start ?? 0);
          return sendFileRange(handle, start, range ? offset + range.end + 1 : stats.size, destination);
        },
        async close() {
          if (released) return;
          released = true;
          await handle.close();
        },
      };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async function write(
    key: string,
    source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    options: { readonly contentType: string },
  ): Promise<BlobInfo> {
    const file = fileOf(key);
    const contentType = checkContentType(options.contentType);
    await Promise.all([
      mkdir(temporary, { recursive: true, mode: 0o700 }),
      mkdir(dirname(file), { recursive: true, mode: 0o700 }),
    ]);
    const written = join(temporary, `${randomBytes(12).toString("hex")}.tmp`);
    const handle = await open(written, "wx", 0o600);
    let header: Header;
    let size = 0;
    let earlyFlush: Promise<void> | undefined;
    let updatedAt: number;
    try {
      // The header line leads the file but holds the content's hash: the content goes after a
      // placeholder of the header's exact length, and the header is written over it at the end.
      const placeholder = `${JSON.stringify({ contentType, sha256: "0".repeat(64) })}\n`;
      await handle.write(placeholder);
      const hash = createHash("sha256");
      let position = Buffer.byteLength(placeholder);
      // Small chunks (a socket gives 16 to 64 KiB) are gathered into writes of WRITE_BATCH_BYTES:
      // one system call and one thread-pool round trip per batch instead of per chunk.
      let batch: Uint8Array[] = [];
      let batchBytes = 0;
      const writeBatch = async () => {
        const chunks = batch;
        const bytes = batchBytes;
        batch = [];
        batchBytes = 0;
        // One vectored write, without copying the chunks together; what it did not take (a write
        // may take less than asked) goes in plain writes after it.
        let done = (await handle.writev(chunks, position)).bytesWritten;
        position += done;
        if (done === bytes) return;
        const rest = Buffer.concat(chunks, bytes).subarray(done);
        for (done = 0; done < rest.byteLength;) {
          const { bytesWritten } = await handle.write(rest, done, rest.byteLength - done, position);
          done += bytesWritten;
          position += bytesWritten;
        }
      };
      // One early flush at a time, started once EARLY_FLUSH_BYTES more were written and the one
      // before has finished. The bytes never wait for it: on a busy disk a flush takes tens of
      // milliseconds, and waiting for each stalled the sender every few MiB.
      let flushedAt = 0;
      let flushing = false;
      const flushEarly = () => {
        flushedAt = position;
        flushing = true;
        earlyFlush = handle.datasync().finally(() => (flushing = false));
        // Awaited later; handled now, so that a failure meanwhile is no unhandled rejection.
        earlyFlush.catch(() => {});
      };
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.byteLength;
        batch.push(chunk);
        batchBytes += chunk.byteLength;
        if (batchBytes >= WRITE_BATCH_BYTES) {
          await writeBatch();
          if (!flushing && position - flushedAt >= EARLY_FLUSH_BYTES) flushEarly();
        }
      }
      if (batchBytes > 0) await writeBatch();
      await earlyFlush;
      header = { contentType, sha256: hash.digest("hex") };
      await handle.write(`${JSON.stringify(header)}\n`, 0);
      // Flushed before the rename, so a crash never leaves a renamed but empty object.
      await handle.datasync();
      updatedAt = Math.floor((await handle.stat()).mtimeMs);
    } catch (error) {
      await earlyFlush?.catch(() => {});
      await handle.close();
      await rm(written, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await rename(written, file);
    } catch (error) {
      await rm(written, { force: true });
      throw error;
    }
    return { key, size, ...header, updatedAt } satisfies BlobInfo;
  }

  return {
    put: (key, bytes, options) => write(key, [bytes], options),

    write,

    open: openBlob,

    async stat(key) {
      const blob = await openBlob(key);
      if (!blob) return undefined;
      await blob.close();
      const { read: _read, sendTo: _sendTo, close: _close, ...info } = blob;
      return info;
    },

    async delete(key) {
      return (await unlessMissing(unlink(fileOf(key)).then(() => true))) ?? false;
    },

    async deletePrefix(prefix) {
      await rm(folderOf(prefix), { recursive: true, force: true, maxRetries: 3 });
    },

    list: (prefix) => listFolder(folderOf(prefix), checkBlobPrefix(prefix)),

    async sweepAbandonedWrites(olderThan) {
      const entries = await unlessMissing(readdir(temporary));
      let deleted = 0;
      for (const name of entries ?? []) {
        const path = join(temporary, name);
        const stats = await unlessMissing(lstat(path));
        if (!stats?.isFile() || stats.mtimeMs >= olderThan) continue;
        if ((await unlessMissing(unlink(path).then(() => true))) === true) deleted++;
      }
      return deleted;
    },
  };
}

/** The objects under `folder`, whose keys start with `keyPrefix`; entries removed while listing are skipped. */
async function* listFolder(folder: string, keyPrefix: string): AsyncGenerator<ListedBlob> {
  const entries = await unlessMissing(opendir(folder));
  if (!entries) return;
  for await (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      yield* listFolder(path, `${keyPrefix}${keySegment(entry.name)}/`);
    } else if (entry.isFile() && entry.name.endsWith(OBJECT_SUFFIX)) {
      const stats = await unlessMissing(lstat(path));
      if (!stats) continue;
      const key = `${keyPrefix}${keySegment(entry.name.slice(0, -OBJECT_SUFFIX.length))}`;
      yield { key, updatedAt: Math.floor(stats.mtimeMs) };
    }
  }
}

/** A key segment as a file or folder name: only `%` is escaped, which keeps `%blob` for object files. */
function segmentName(segment: string): string {
  return segment.replaceAll("%", "%25");
}

/** The key segment a file or folder name stands for: segmentName undone. */
function keySegment(name: string): string {
  return name.replaceAll("%25", "%");
}

async function readHeader(handle: FileHandle, key: string): Promise<{ header: Header; offset: number }> {
  const buffer = Buffer.alloc(HEADER_READ_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, HEADER_READ_BYTES, 0);
  const end = buffer.subarray(0, bytesRead).indexOf(0x0a);
  if (end === -1)
    throw new Error(`object ${JSON.stringify(key)} has no header: the file was not written by this store`);
  const header = JSON.parse(buffer.subarray(0, end).toString("utf8")) as Header;
  return { header, offset: end + 1 };
}

/** What `operation` answers, or undefined when the file or folder it needs does not exist. */
async function unlessMissing<T>(operation: Promise<T>): Promise<T | undefined> {
  try {
    return await operation;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}
