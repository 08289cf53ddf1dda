import { Code, ConnectError } from "@connectrpc/connect";
import { findNulInJson, NUL_REASON } from "@platform/codegen/runtime/server";
import type { JsonObject } from "./identity-schema.js";

/** The largest JSON document a pool, tenant or connection holds. */
export const MAX_JSON_DOCUMENT_CHARS = 64 * 1024;

/**
 * Reads a `*Json` field of the admin API: a JSON object written as a string. `{}` is the empty
 * document, which is how a caller clears one. Errors name the field; a string holding U+0000,
 * which jsonb cannot store, is one of them.
 */
export function parseJsonDocument(field: string, text: string): JsonObject {
  if (text.length > MAX_JSON_DOCUMENT_CHARS)
    invalid(`${field} is ${text.length} characters; at most ${MAX_JSON_DOCUMENT_CHARS}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    invalid(`${field} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    invalid(`${field} must be a JSON object, like {}`);
  // The text holds `\u0000` escapes, not the character, so the edge's check could not see it.
  const nul = findNulInJson(value, field);
  if (nul !== undefined) invalid(`${nul}: ${NUL_REASON}`);
  return value as JsonObject;
}

function invalid(message: string): never {
  throw new ConnectError(message, Code.InvalidArgument);
}
