import { startPollLoop, type PollLoop } from "../../../background/poll-loop.js";
import type { BlobStore } from "../../../blob/blob-store.js";
import type { Database } from "../../../db/database.js";
import type { Logger } from "../../../log/logger.js";
import { loadAdvisoryFeed, type AdvisoryFeed } from "./advisory-feed.js";
import { scanImage, type OpenBlobBytes } from "./image-scanner.js";
import { RpmHeaderError } from "./rpm-database.js";
import { createScanStore, type ScanCandidate, type ScanResult } from "./scan-store.js";
import { SqliteFormatError } from "./sqlite-reader.js";
import { TarFormatError } from "./tar-entries.js";

export const DEFAULT_ADVISORY_REFRESH_MS = 3_600_000;
export const DEFAULT_SCAN_CONCURRENCY = 1;

export interface ScanWorkerOptions {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly logger: Logger;
  /** The folder of OSV records; absent means no feed, and every scan answers NoFeed. */
  readonly advisoryDir: string | undefined;
  /** How often the feed is read again (and results from an older feed redone). */
  readonly advisoryRefreshMs?: number;
  /** Images this process scans at once. */
  readonly concurrency?: number;
  /** How often to look for new image manifests (the OCI plane does not signal them). */
  readonly pollMs?: number;
  /** A Running scan untouched this long belongs to a process that died, and is taken over. */
  readonly staleMs?: number;
  /** Largest package database file read from a layer. */
  readonly maxDatabaseBytes?: number;
  readonly now?: () => number;
}

export interface ScanWorker {
  start(): void;
  /** Stops after the scans in progress. */
  stop(): Promise<void>;
  /** One pass: (re)loads the feed when due, then claims and scans up to `concurrency` images; answers how many. */
  runOnce(): Promise<number>;
}

/**
 * The registry's background scanner: finds image manifests without a current scan, claims each
 * (organization, digest) once across processes, streams its layers from the blob store, and writes
 * the result. Bounded: `concurrency` images at a time, layers streamed, one package database held.
 */
export function createScanWorker(options: ScanWorkerOptions): ScanWorker {
  const { db, blobs, logger } = options;
  const now = options.now ?? Date.now;
  const concurrency = options.concurrency ?? DEFAULT_SCAN_CONCURRENCY;
  const refreshMs = options.advisoryRefreshMs ?? DEFAULT_ADVISORY_REFRESH_MS;
  const staleMs = options.staleMs ?? 15 * 60_000;
  const maxDatabaseBytes = options.maxDatabaseBytes ?? 64 * 1024 * 1024;
  const store = createScanStore(db);
  let feed: AdvisoryFeed | undefined;
  let feedLoadedAt: number | undefined;
  let loop: PollLoop | undefined;

  async function refreshFeed(): Promise<void> {
    if (!options.advisoryDir) return;
    // Until a first load succeeds (the folder may be mounted after start), try again every minute.
    const due = feed ? refreshMs : Math.min(refreshMs, 60_000);
    if (feedLoadedAt !== undefined && now() - feedLoadedAt < due) return;
    feedLoadedAt = now();
    try {
      const loaded = await loadAdvisoryFeed(options.advisoryDir);
      for (const { file, reason } of loaded.skipped) logger.warn("advisory file skipped", { file, reason });
      if (loaded.version !== feed?.version)
        logger.info("advisory feed loaded", { advisories: loaded.size, version: loaded.version });
      feed = loaded;
    } catch (error) {
      // The previous feed, if any, stays in use until a later refresh succeeds.
      logger.error("advisory feed could not be read", { dir: options.advisoryDir, error });
    }
  }

  async function scanOne(candidate: ScanCandidate, claimedAt: number, current: AdvisoryFeed | undefined) {
    const { orgId, digest } = candidate;
    // A long scan (large layers, slow storage) renews its claim so no other process takes it over;
    // the result is written after the last renewal settles, against the time it left on the row.
    let heldAt = claimedAt;
    let renewal = Promise.resolve();
    const renewer = setInterval(
      () => {
        renewal = renewal.then(async () => {
          const at = now();
          if (await store.renew(orgId, digest, heldAt, at).catch(() => false)) heldAt = at;
        });
      },
      Math.max(1_000, Math.floor(staleMs / 3)),
    );
    let result: ScanResult | undefined;
    try {
      result = await scanClaimed(candidate, current);
    } finally {
      clearInterval(renewer);
      await renewal;
    }
    if (result) await store.finish(orgId, digest, heldAt, result, now());
    else await store.release(orgId, digest, heldAt);
  }

  /** The scan's result, or undefined when the manifest was deleted since it was found. */
  async function scanClaimed(
    candidate: ScanCandidate,
    current: AdvisoryFeed | undefined,
  ): Promise<ScanResult | undefined> {
    const { orgId, digest } = candidate;
    const manifest = await store.manifestContent(orgId, digest);
    if (!manifest) return undefined;
    const openBlob: OpenBlobBytes = async (blobDigest) => {
      const key = await store.blobStorageKey(orgId, blobDigest);
      const blob = key === undefined ? undefined : await blobs.open(key);
      return blob?.read();
    };
    try {
      const outcome = await scanImage(manifest, openBlob, current, { maxDatabaseBytes });
      return outcome.status === "Success"
        ? { status: "Success", report: outcome.report, feedVersion: current!.version }
        : { status: outcome.status, message: outcome.message, feedVersion: current?.version ?? null };
    } catch (error) {
      if (isImageFormatError(error))
        logger.warn("image scan found unreadable content", { orgId, digest, message: publicMessage(error) });
      else logger.error("image scan failed", { orgId, digest, error });
      return { status: "Error", message: publicMessage(error), feedVersion: current?.version ?? null };
    }
  }

  async function runOnce(): Promise<number> {
    await refreshFeed();
    const current = feed;
    const candidates = await store.candidates(current?.version ?? null, now() - staleMs, concurrency * 4);
    const claimed: { candidate: ScanCandidate; at: number }[] = [];
    for (const candidate of candidates) {
      if (claimed.length >= concurrency) break;
      const at = now();
      if (await store.claim(candidate, at)) claimed.push({ candidate, at });
    }
    await Promise.all(
      claimed.map(({ candidate, at }) =>
        scanOne(candidate, at, current).catch((error: unknown) =>
          logger.error("image scan could not be recorded", { digest: candidate.digest, error }),
        ),
      ),
    );
    return claimed.length;
  }

  return {
    runOnce,
    start() {
      loop ??= startPollLoop(async () => (await runOnce()) > 0, {
        pollMs: options.pollMs ?? 5_000,
        onError: (error) => logger.error("image scan pass failed", { error }),
      });
    },
    async stop() {
      await loop?.stop();
      loop = undefined;
    },
  };
}

/** A fault of the image's bytes (a layer, a package database), not of the server: its message is safe to show. */
function isImageFormatError(error: unknown): boolean {
  return (
    error instanceof TarFormatError ||
    isDatabaseFormatError(error) ||
    (error instanceof Error && "errno" in error && "code" in error && String(error.code).startsWith("Z_"))
  );
}

const isDatabaseFormatError = (error: unknown) => error instanceof SqliteFormatError || error instanceof RpmHeaderError;

function publicMessage(error: unknown): string {
  if (error instanceof TarFormatError) return `a layer is not a readable tar archive: ${error.message}`;
  if (isDatabaseFormatError(error)) return `the rpm database cannot be read: ${(error as Error).message}`;
  if (isImageFormatError(error)) return "a layer is not valid gzip data";
  return "the scan failed";
}
