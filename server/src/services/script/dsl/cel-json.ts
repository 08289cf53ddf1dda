import { celList, celMap, isCelList, isCelMap, isCelType, isCelUint } from "@bufbuild/cel";
import type { CelInput, CelValue } from "@bufbuild/cel";
import { toJson } from "@bufbuild/protobuf";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { chargeActive, CONTAINER_COST } from "./cost-meter.js";

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
 * Lists and objects become CEL lists and maps that convert each value when it is first read
 * (each such read is charged to the running evaluation, cost-meter.ts), so that an expression
 * reading one field of a large step output does not convert the whole output: converting a few
 * megabytes of JSON in full takes hundreds of milliseconds. A list or map that comes back
 * unchanged (`${steps.fetch.output}`) is returned as the JSON it came from, without a copy. Keys
 * are own properties only, so a key such as `__proto__` is just a key.
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

/**
 * The JSON a lazily converted list or map stands for, kept on it to be returned as it is. A
 * property of our own rather than a WeakMap: converting a list of objects makes one per element,
 * and WeakMap entries made that twice as slow.
 */
const ORIGIN = Symbol("json origin");
type WithOrigin = { [ORIGIN]?: JsonValue };

/** Converts JSON to a CEL input value, applying the number rule above. */
export function jsonToCel(value: JsonValue): CelInput {
  if (value === null || typeof value === "boolean" || typeof value === "string") return value;
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : value;
  const cel = Array.isArray(value) ? celList(lazyElements(value)) : celMap(new JsonObjectMap(value));
  (cel as WithOrigin)[ORIGIN] = value;
  return cel;
}

/** The elements of a JSON list, each converted and charged when it is first read. */
function lazyElements(list: JsonValue[]): CelInput[] {
  const converted: (CelInput | undefined)[] = new Array(list.length);
  return new Proxy(converted, {
    get(target, key, receiver) {
      const index = typeof key === "string" ? arrayIndex(key, list.length) : -1;
      if (index === -1) return Reflect.get(target, key, receiver) as unknown;
      let value = target[index];
      if (value === undefined) {
        const item = list[index] as JsonValue;
        chargeActive(typeof item === "object" && item !== null ? 1 + CONTAINER_COST : 1);
        target[index] = value = jsonToCel(item);
      }
      return value;
    },
  }) as CelInput[];
}

/** `key` as an index below `length`, or -1 (a property such as `length` or `values`). */
function arrayIndex(key: string, length: number): number {
  const first = key.charCodeAt(0);
  if (!(first >= 48 && first <= 57)) return -1;
  const index = Number(key);
  return Number.isInteger(index) && index < length ? index : -1;
}

/** A JSON object seen as a map, converting each value once, when it is first read. */
class JsonObjectMap implements ReadonlyMap<string, CelInput> {
  /** Made on the first read: a list of many objects makes many of these maps. */
  private converted: Map<string, CelInput> | undefined;
  private names: string[] | undefined;

  constructor(private readonly object: JsonObject) {}

  get size(): number {
    return this.keyList().length;
  }

  get(key: string): CelInput | undefined {
    let value = this.converted?.get(key);
    if (value === undefined && typeof key === "string" && Object.hasOwn(this.object, key)) {
      const item = this.object[key] as JsonValue;
      chargeActive(typeof item === "object" && item !== null ? 1 + CONTAINER_COST : 1);
      value = jsonToCel(item);
      (this.converted ??= new Map()).set(key, value);
    }
    return value;
  }

  has(key: string): boolean {
    return typeof key === "string" && Object.hasOwn(this.object, key);
  }

  keys(): MapIterator<string> {
    return this.keyList().values();
  }

  *entries(): MapIterator<[string, CelInput]> {
    for (const key of this.keyList()) yield [key, this.get(key) as CelInput];
  }

  *values(): MapIterator<CelInput> {
    for (const key of this.keyList()) yield this.get(key) as CelInput;
  }

  forEach(callback: (value: CelInput, key: string, map: ReadonlyMap<string, CelInput>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  [Symbol.iterator](): MapIterator<[string, CelInput]> {
    return this.entries();
  }

  private keyList(): string[] {
    return (this.names ??= Object.keys(this.object));
  }
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
      if (!Number.isFinite(value))
        throw new CelJsonError(`the result ${value} is not a finite number, which JSON cannot hold`);
      return value === 0 ? 0 : value; // -0 → 0
  }
  if (value === null) return null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  const origin = (value as WithOrigin)[ORIGIN];
  if (origin !== undefined) return origin;
  if (isCelUint(value)) return integerToJson(value.value);
  if (isCelList(value)) return Array.from(value, celToJson);
  if (isCelMap(value)) {
    const object: JsonObject = {};
    for (const [key, entry] of value) {
      const name = typeof key === "string" ? key : isCelUint(key) ? key.value.toString() : String(key);
      Object.defineProperty(object, name, {
        value: celToJson(entry),
        enumerable: true,
        writable: true,
        configurable: true,
      });
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
