import { customType } from "drizzle-orm/pg-core";

/**
 * JSON documents as jsonb, for any JSON value a caller hands in. PostgreSQL's jsonb cannot hold
 * U+0000 in a string (nor can text), yet a tool's response or a user's input may: such a document
 * is stored wrapped in an envelope, `{"\u0001nul": <the value with every string escaped>}`, where
 * the escape turns U+0000 into U+0001 "0" and U+0001 itself into U+0001 "1". Reading unwraps it.
 * A document that merely looks like the envelope is wrapped too, so every value reads back as it
 * was written, and a document with no NUL (nearly all) is stored as it is: the check is two
 * substring scans of the JSON text that has to be written anyway (about 60 µs for 3.4 MB, whose
 * JSON.stringify takes 20 ms).
 */
const ENVELOPE = "\u0001nul";
const ESCAPE = "\u0001";
/** How the JSON text of a NUL and of the envelope's start are spelled (JSON.stringify escapes control characters). */
const NUL_IN_JSON = "\\u0000";
const ENVELOPE_START_IN_JSON = '{"\\u0001nul"';

/** The JSON text to store for `value` (`undefined`, which JSON cannot spell, as null). */
export function toStoredJson(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  // Fast path. A false positive (an escaped backslash before "u0000") only costs the walk below.
  if (!text.includes(NUL_IN_JSON) && !text.startsWith(ENVELOPE_START_IN_JSON)) return text;
  return hasNul(value) || isEnvelope(value) ? JSON.stringify({ [ENVELOPE]: mapStrings(value, escape) }) : text;
}

/** The value a stored document stands for. */
export function fromStoredJson(stored: unknown): unknown {
  return isEnvelope(stored) ? mapStrings(stored[ENVELOPE], unescape) : stored;
}

/**
 * A jsonb column holding any JSON value faithfully. Both drivers (PGlite, postgres-js) hand
 * jsonb back parsed; unlike drizzle's own jsonb column, a string value is not parsed a second
 * time, so the string "123" reads back as "123" rather than as the number 123.
 */
export const storedJson = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => "jsonb",
  toDriver: (value) => toStoredJson(value),
  fromDriver: (value) => fromStoredJson(value),
});

function isEnvelope(value: unknown): value is Record<typeof ENVELOPE, unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.hasOwn(value, ENVELOPE) &&
    Object.keys(value).length === 1
  );
}

function hasNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(hasNul);
  if (typeof value === "object" && value !== null)
    return Object.entries(value).some(([key, item]) => key.includes("\u0000") || hasNul(item));
  return false;
}

/** `value` with `map` applied to every string, object keys included. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  // fromEntries defines properties, so a key such as "__proto__" stays a key.
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map)]));
  return value;
}

/** Escapes U+0001 first, so that the U+0001 each NUL becomes is not escaped again. */
function escape(text: string): string {
  return text.includes("\u0000") || text.includes(ESCAPE)
    ? text.replaceAll(ESCAPE, `${ESCAPE}1`).replaceAll("\u0000", `${ESCAPE}0`)
    : text;
}

/** Every U+0001 in an escaped string is followed by its digit, so the pairs read back unambiguously. */
function unescape(text: string): string {
  return text.includes(ESCAPE) ? text.replaceAll(`${ESCAPE}0`, "\u0000").replaceAll(`${ESCAPE}1`, ESCAPE) : text;
}
