import { celMap, isCelList, isCelMap, isCelType, isCelUint } from "@bufbuild/cel";
import type { CelInput, CelValue } from "@bufbuild/cel";
import { toJson } from "@bufbuild/protobuf";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";

/**
 * The bridge between JSON (step outputs, inputs, templates) and CEL values.
 *
 * JSON → CEL. JSON has one number type; CEL has `int` and `double` and does not mix them in
 * arithmetic (`1 + 1.5` has no overload). The rule: a JSON number that is an integer (no fraction,
 * within ±2^53) becomes a CEL `int`; any other number becomes a `double`. So `inputs.count + 1`,
 * `size(list) == inputs.count` and `steps.a.output.items[inputs.index]` work as people expect, and
 * comparisons across the two (`inputs.ratio > 2`) are defined by CEL anyway. The one surprise,
 * documented in docs/script-dsl.md: `5 / 2` is integer division (2); write `double(x) / 2.0`.
 * JSON `1.0` is the integer 1 (JSON.parse cannot tell them apart).
 *
 * Objects become CEL maps built from `Map`s, never from plain objects, so a key such as
 * `__proto__` is just a key.
 *
 * CEL → JSON. `int`/`uint` become numbers when they are safe integers and fail otherwise (a silent
 * rounding would corrupt ids); `double` becomes a number unless it is NaN or infinite, which JSON
 * cannot hold; bytes become base64 text; maps become objects (int, uint and bool keys become their
 * decimal or `true`/`false` text); timestamps and durations take their protobuf JSON form
 * (`"2024-01-01T00:00:00Z"`, `"3600s"`); a type value (`type(x)`) becomes its name.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A value CEL cannot return as JSON: the message says why; the caller adds where. */
export class CelJsonError extends Error {
  override name = "CelJsonError";
}

/** Converts JSON to a CEL input value, applying the number rule above. */
export function jsonToCel(value: JsonValue): CelInput {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(jsonToCel);
  const entries = new Map<string, CelInput>();
  for (const key of Object.keys(value)) entries.set(key, jsonToCel(value[key] as JsonValue));
  return celMap(entries);
}

/** Converts a CEL result to JSON, or throws CelJsonError for values JSON cannot hold. */
export function celToJson(value: CelValue): JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "bigint":
      return integerToJson(value);
    case "number":
      if (!Number.isFinite(value)) throw new CelJsonError(`the result ${value} is not a finite number, which JSON cannot hold`);
      return value === 0 ? 0 : value; // -0 → 0
  }
  if (value === null) return null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (isCelUint(value)) return integerToJson(value.value);
  if (isCelList(value)) return Array.from(value, celToJson);
  if (isCelMap(value)) {
    const object: JsonObject = {};
    for (const [key, entry] of value) {
      const name = typeof key === "string" ? key : isCelUint(key) ? key.value.toString() : String(key);
      Object.defineProperty(object, name, { value: celToJson(entry), enumerable: true, writable: true, configurable: true });
    }
    return object;
  }
  if (isCelType(value)) return value.name;
  if (isReflectMessage(value)) return toJson(value.desc, value.message) as JsonValue;
  throw new CelJsonError("the result has no JSON form");
}

function integerToJson(value: bigint): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) {
    throw new CelJsonError(`the integer result ${value} is outside ±2^53 and cannot be kept exactly in JSON`);
  }
  return number;
}

/**
 * Text form of a JSON value for string interpolation: strings as they are, everything else as
 * compact JSON (`42`, `true`, `null`, `{"a":1}`).
 */
export function jsonToText(value: JsonValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Whether a value parsed from JSON or YAML is a plain JSON object (not an array, not null). */
export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
