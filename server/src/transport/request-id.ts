import { randomUUID } from "node:crypto";

/** A caller's id is kept only when it is safe to echo and log verbatim: short, no spaces or quotes. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The id that ties a request's log line, its response and the caller's own logs together: the
 * caller's `x-request-id` when acceptable (a proxy or client that set one can correlate), else a new
 * UUID. A repeated header arrives as an array and is not acceptable.
 */
export function requestIdFor(header: string | string[] | undefined): string {
  return typeof header === "string" && ACCEPTABLE_REQUEST_ID.test(header) ? header : randomUUID();
}
