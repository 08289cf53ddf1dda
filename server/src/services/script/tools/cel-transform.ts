import { isCelError, isCelList, isCelMap, isCelType, isCelUint, parse, plan, celEnv } from "@bufbuild/cel";
import type { CelInput, CelValue } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { toJson } from "@bufbuild/protobuf";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { invalidInput, ToolError } from "./tool-error.js";
import type { JsonObject, JsonValue } from "./tool.js";

/** The standard library plus the strings extension (`split`, `replace`, `lowerAscii`, `format`...). */
const env = celEnv({ funcs: strings });

/**
 * The evaluation behind `json.transform`: `expression` with `data` bound as `data`, its value
 * as JSON. Synchronous and unbounded in time, so it runs in a worker thread (cel-worker.ts),
 * never on the server's event loop. Failures are ToolErrors named after the tool.
 *
 * The number rule: JSON has one number type, CEL has `int` and `double`, and CEL does not mix
 * them (`1.5 + 1` is an error). A JSON number that is a whole number within ±2^53 enters as an
 * `int`, any other number as a `double`. On the way out `int`, `uint` and `double` become JSON
 * numbers (an int beyond ±2^53, NaN or an infinity is an error rather than a silently wrong number),
 * bytes become base64, timestamps and durations their JSON strings, map keys strings.
 */
export function evaluateTransform(expression: string, data: JsonValue): JsonValue {
  let program: ReturnType<typeof plan>;
  try {
    program = plan(env, parse(expression));
  } catch (error) {
    throw invalidInput(
      `json.transform: expression does not parse: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const value = program({ data: toCel(data) });
  if (isCelError(value))
    throw new ToolError("failed", `json.transform: evaluating the expression failed: ${value.message}`);
  return fromCel(value, "result");
}

function toCel(value: JsonValue): CelInput {
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === "object") {
    const map = new Map<string, CelInput>();
    for (const [key, item] of Object.entries(value)) map.set(key, toCel(item));
    return map;
  }
  return value;
}

/** A CEL value as JSON; `path` names the place in the result for the error message. */
function fromCel(value: CelValue, path: string): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "bigint") return safeNumber(value, path);
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw new ToolError("failed", `json.transform: ${path} is ${value}, which JSON cannot hold`);
    return value;
  }
  if (isCelUint(value)) return safeNumber(value.value, path);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (isCelList(value)) return [...value].map((item, index) => fromCel(item, `${path}[${index}]`));
  if (isCelMap(value)) {
    const object: JsonObject = {};
    for (const [key, item] of value) {
      const name = isCelUint(key) ? String(key.value) : String(key);
      Object.defineProperty(object, name, {
        value: fromCel(item, `${path}[${JSON.stringify(name)}]`),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return object;
  }
  if (isCelType(value)) return value.name;
  if (isReflectMessage(value)) return toJson(value.desc, value.message) as JsonValue;
  throw new ToolError("failed", `json.transform: ${path} has a value JSON cannot hold`);
}

function safeNumber(value: bigint, path: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new ToolError(
      "failed",
      `json.transform: ${path} is ${value}, beyond the ±2^53 that a JSON number holds exactly`,
    );
  }
  return Number(value);
}
