import { randomBytes } from "node:crypto";

/**
 * Where a run lives in its bucket: `_actions/runs/{reverse_ts}_{run_id}/`. The reverse timestamp
 * makes a plain key-ordered listing newest first, so history needs no index.
 */

export const ACTIONS_PREFIX = "_actions/";
export const RUNS_PREFIX = "_actions/runs/";
const REVERSE_BASE = 9_999_999_999_999;

/** `9999999999999 - ms`, zero-padded to 13 digits. */
export function reverseTimestamp(ms: number): string {
  return String(REVERSE_BASE - Math.max(0, Math.min(REVERSE_BASE, Math.floor(ms)))).padStart(13, "0");
}

/** The epoch milliseconds a reverse timestamp stands for. */
export function timestampOfReverse(reverseTs: string): number {
  return REVERSE_BASE - Number(reverseTs);
}

export const runPrefix = (reverseTs: string, runId: string) => `${RUNS_PREFIX}${reverseTs}_${runId}/`;
export const manifestKey = (reverseTs: string, runId: string) => `${runPrefix(reverseTs, runId)}manifest.json`;
export const siblingKey = (reverseTs: string, runId: string, extension: string) =>
  `${runPrefix(reverseTs, runId)}output.${extension}`;

/** The run folder a key of the runs prefix names (`{reverse_ts}_{run_id}`), or undefined. */
export function parseRunFolder(folder: string): { reverseTs: string; runId: string } | undefined {
  const match = /^(\d{13})_([0-9a-f-]{36})\/?$/.exec(folder);
  return match ? { reverseTs: match[1]!, runId: match[2]! } : undefined;
}

/** A UUIDv7 (RFC 9562): 48 bits of epoch milliseconds, then random bits, so ids sort by creation. */
export function uuidV7(ms: number = Date.now()): string {
  const bytes = randomBytes(16);
  let time = BigInt(ms);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = Number(time & 0xffn);
    time >>= 8n;
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
