import { Code, ConnectError } from "@connectrpc/connect";
import { privateHostKind } from "../../../net/private-network.js";
import { decodePageToken, encodePageToken } from "../../../pagination/page-token.js";
import { DurationError, parseDuration } from "../dsl/duration.js";
import { parsePath } from "../dsl/step-paths.js";

/**
 * Checks of the thread methods' request fields. Each failure is INVALID_ARGUMENT naming the field,
 * as the contract asks.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Thread ids are UUIDs: anything else is refused before it reaches a uuid column. */
export function checkThreadId(threadId: string): void {
  if (threadId === "") throw invalid("thread_id is required");
  if (!UUID.test(threadId)) throw invalid(`thread_id: ${quote(threadId)} is not a thread id`);
}

/** A concrete step path `i(.s.j)*`; `required` false lets "" through (optional step_path fields). */
export function checkStepPath(path: string, required: boolean): void {
  if (path === "" && !required) return;
  if (path === "") throw invalid("step_path is required");
  if (parsePath(path) === undefined) throw invalid(`step_path: ${quote(path)} is not a step path such as "1.0.2"`);
}

/**
 * CreateThread `timeout` in milliseconds: "" gives the server's default (0 = no deadline); a
 * given timeout must be longer than 0, since a thread with no time to run could only fail.
 */
export function threadTimeoutMs(text: string, defaultMs: number): number {
  if (text === "") return defaultMs;
  let ms: number;
  try {
    ms = parseDuration(text, "timeout");
  } catch (error) {
    if (error instanceof DurationError) throw invalid(error.message);
    throw error;
  }
  if (ms === 0) throw invalid(`timeout: ${quote(text)} must be longer than 0`);
  return ms;
}

/**
 * Limits of CreateThread `metadata`. The contract sets none; these are Stripe's metadata limits
 * (50 keys, keys up to 40 characters, values up to 500), which keep a label map small enough to be
 * echoed in every Thread message.
 */
export const METADATA_LIMITS = { entries: 50, keyLength: 40, valueLength: 500 } as const;

export function checkMetadata(metadata: Readonly<Record<string, string>>): void {
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_LIMITS.entries)
    throw invalid(`metadata has ${entries.length} entries, more than the limit of ${METADATA_LIMITS.entries}`);
  for (const [key, value] of entries) {
    const field = `metadata[${quote(key)}]`;
    if (key === "") throw invalid("metadata: a key is empty");
    if ([...key].length > METADATA_LIMITS.keyLength)
      throw invalid(`${field}: the key is longer than ${METADATA_LIMITS.keyLength} characters`);
    if ([...value].length > METADATA_LIMITS.valueLength)
      throw invalid(`${field}: the value is longer than ${METADATA_LIMITS.valueLength} characters`);
    // PostgreSQL cannot store U+0000 in jsonb text.
    if (key.includes("\0") || value.includes("\0")) throw invalid(`${field} contains a NUL character`);
  }
}

/** Longest callback URL accepted, the length browsers and proxies reliably carry. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/**
 * CreateThread `callback_url`: an absolute http(s) URL. Unless the server allows it, a host that
 * is a loopback, private or link-local address (or `localhost`) is refused here; a name that
 * resolves to one can only be caught when the webhook is delivered, through the same policy
 * (net/private-network.ts).
 */
export function checkCallbackUrl(text: string, allowPrivate: boolean): void {
  if (text === "") return;
  if (text.length > MAX_CALLBACK_URL_LENGTH)
    throw invalid(`callback_url is longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`callback_url: ${quote(text)} is not an absolute URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalid(`callback_url: the scheme must be https or http, not ${quote(url.protocol.slice(0, -1))}`);
  const kind = allowPrivate ? undefined : privateHostKind(url.hostname);
  if (kind !== undefined)
    throw invalid(`callback_url: ${quote(url.hostname)} is ${kind}, which this server does not call`);
}

/** Chunk sizes of the result streams: default 2 MiB, moved into 64 KiB..16 MiB, negative refused. */
export const CHUNK_BYTES = { fallback: 2 * 1024 * 1024, min: 64 * 1024, max: 16 * 1024 * 1024 } as const;

export function chunkBytesOf(requested: number): number {
  if (requested < 0) throw invalid(`max_chunk_bytes must be 0 (the default) or more, got ${requested}`);
  if (requested === 0) return CHUNK_BYTES.fallback;
  return Math.min(CHUNK_BYTES.max, Math.max(CHUNK_BYTES.min, requested));
}

/** ListThreads position: the last row served plus the filters it was served under. */
export interface ThreadCursor {
  readonly createdAt: number;
  readonly id: string;
}

const LIST = "ListThreads";

/** Filters are part of the token, so that a token used with other filters is refused (AIP-158). */
export function encodeThreadCursor(cursor: ThreadCursor, filters: string): string {
  return encodePageToken(LIST, `${cursor.createdAt}:${cursor.id}:${filters}`);
}

export function decodeThreadCursor(token: string, filters: string): ThreadCursor | undefined {
  const text = decodePageToken(LIST, token);
  if (text === "") return undefined;
  const match = /^(\d{1,16}):([0-9a-f-]{36}):(.*)$/s.exec(text);
  if (!match || !UUID.test(match[2] as string))
    throw invalid(`page_token is not a token from a previous ${LIST} response`);
  if (match[3] !== filters)
    throw invalid("page_token was issued for other filters: use it with the same status_filter and script_name_filter");
  return { createdAt: Number(match[1]), id: match[2] as string };
}

/** A value quoted for an error message, cut short so a huge value cannot flood the message. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}

export function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
