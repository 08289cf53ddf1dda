import { startPollLoop, type PollLoop } from "../background/poll-loop.js";
import type { BlobStore } from "./blob-store.js";

/** A write untouched for this long was abandoned: no upload or artifact takes a day between two bytes. */
export const ABANDONED_WRITE_MS = 24 * 60 * 60 * 1000;
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes, every hour, what writes that never finished left in the blob store (a process stopped
 * mid-write). Every process runs it: a sweep that races another deletes nothing twice.
 */
export function startAbandonedWriteSweeper(blobs: BlobStore, onError: (error: unknown) => void): PollLoop {
  return startPollLoop(async () => void (await blobs.sweepAbandonedWrites(Date.now() - ABANDONED_WRITE_MS)), {
    pollMs: SWEEP_INTERVAL_MS,
    onError,
  });
}
