import { contentTypeFor, isJsonMediaType, mediaTypeOf } from "../rest/media-type.js";
import type { RestOperation } from "../rest/rest-plane.js";
import type { PlaneResponse } from "./node-exchange.js";
import type { RestResult } from "./rest-call.js";

const encoder = new TextEncoder();

/**
 * Writes a handler's result: its documented media type (or the one the result names, when the
 * response has several), its headers over the ones middleware set, and no body at all for a
 * result without one (a redirect is `{status: 302, headers: {location}}`).
 */
export function writeRestResult(operation: RestOperation, result: RestResult, responseHeader: Headers): PlaneResponse {
  const header = new Headers(responseHeader);
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    if (value !== undefined) header.set(name, String(value));
  }
  if (result.body === undefined || result.status === 204 || result.status === 304) {
    return { status: result.status, header };
  }
  const spec =
    operation.responses.find((r) => r.status === result.status) ??
    operation.responses.find((r) => r.status === "default");
  const mediaType =
    mediaTypeOf(result.contentType) ||
    spec?.contentTypes[0] ||
    (typeof result.body === "string" ? "text/plain" : "application/json");
  header.set("content-type", contentTypeFor(mediaType));
  return { status: result.status, header, body: encodeBody(mediaType, result.body) };
}

function encodeBody(mediaType: string, body: unknown): Uint8Array {
  if (body instanceof Uint8Array) return body;
  if (isJsonMediaType(mediaType)) return encoder.encode(JSON.stringify(body));
  return encoder.encode(String(body));
}
