import { and, asc, eq, gt, gte, sql } from "drizzle-orm";
import type { Database } from "../../db/database.js";
import { storageObjects } from "./storage-schema.js";

export interface ListObjectsOptions {
  readonly prefix: string;
  /** Empty: no grouping. */
  readonly delimiter: string;
  /** Only keys (and common prefixes) after this one, exclusive: a marker, start-after or a continuation. */
  readonly after: string;
  readonly maxKeys: number;
}

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly contentType: string;
  readonly lastModified: number;
}

export interface ObjectListing {
  readonly objects: ListedObject[];
  /** Keys rolled up at the delimiter, each listed once, in key order with the objects. */
  readonly commonPrefixes: string[];
  readonly isTruncated: boolean;
  /** Where the next page starts (exclusive); set when truncated. */
  readonly next: string;
}

/** Sorts after every key starting with a prefix: the largest code point. */
const AFTER_ALL = "\u{10FFFF}";
const BATCH = 1000;

/**
 * S3's listing: keys under `prefix` in byte order (the key column collates "C"), with keys that
 * hold `delimiter` after the prefix rolled up into one common prefix each. Objects and common
 * prefixes together count against `maxKeys`. Rows are read in batches from the primary key, and a
 * common prefix skips the rest of its keys at once, so a folder of millions costs one row.
 */
export async function listObjectRows(
  db: Database,
  bucketId: string,
  options: ListObjectsOptions,
): Promise<ObjectListing> {
  const { prefix, delimiter, maxKeys } = options;
  const objects: ListedObject[] = [];
  const commonPrefixes: string[] = [];
  let cursor = options.after;
  // A marker that is itself a common prefix (S3's NextMarker of a page ending on one) skips its keys.
  if (delimiter !== "" && cursor.startsWith(prefix) && cursor.endsWith(delimiter)) {
    const rest = cursor.slice(prefix.length);
    if (rest.indexOf(delimiter) === rest.length - delimiter.length) cursor += AFTER_ALL;
  }
  let last = "";
  const full = () => objects.length + commonPrefixes.length >= maxKeys;

  for (;;) {
    const rows = await db
      .select({
        key: storageObjects.key,
        size: storageObjects.size,
        etag: storageObjects.etag,
        contentType: storageObjects.contentType,
        lastModified: storageObjects.lastModified,
      })
      .from(storageObjects)
      .where(
        and(
          eq(storageObjects.bucketId, bucketId),
          gte(storageObjects.key, prefix),
          cursor === "" ? undefined : gt(storageObjects.key, cursor),
          prefix === "" ? undefined : sql`starts_with(${storageObjects.key}, ${prefix})`,
        ),
      )
      .orderBy(asc(storageObjects.key))
      .limit(BATCH);
    let skipped = false;
    for (const row of rows) {
      const rest = row.key.slice(prefix.length);
      const at = delimiter === "" ? -1 : rest.indexOf(delimiter);
      if (full()) return { objects, commonPrefixes, isTruncated: true, next: last };
      if (at === -1) {
        objects.push(row);
        last = cursor = row.key;
        continue;
      }
      const common = prefix + rest.slice(0, at + delimiter.length);
      commonPrefixes.push(common);
      last = common;
      cursor = common + AFTER_ALL;
      skipped = true;
      break;
    }
    if (!skipped && rows.length < BATCH) return { objects, commonPrefixes, isTruncated: false, next: "" };
  }
}
