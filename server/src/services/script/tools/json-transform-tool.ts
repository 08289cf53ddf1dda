import { isCelError, isCelList, isCelMap, isCelType, isCelUint, parse, plan, celEnv } from "@bufbuild/cel";
import type { CelInput, CelValue } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { toJson } from "@bufbuild/protobuf";
import { isReflectMessage } from "@bufbuild/protobuf/reflect";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import { invalidInput, ToolError } from "./tool-error.js";
import type { JsonObject, JsonValue, Tool } from "./tool.js";

/** The standard library plus the strings extension (`split`, `replace`, `lowerAscii`, `format`...). */
const env = celEnv({ funcs: strings });

/**
 * `json.transform`: evaluates a CEL expression with the input's `data` bound as `data`.
 *
 * The number rule: JSON has one number type, CEL has `int` and `double`, and CEL does not mix
 * them (`1.5 + 1` is an error). A JSON number that is a whole number within ±2^53 enters as an
 * `int`, any other number as a `double`; so `data.count + 1` works on `{"count": 3}`, and mixing
 * needs a cast (`double(data.count) * 1.5`). On the way out `int`, `uint` and `double` become JSON
 * numbers (an int beyond ±2^53, NaN or an infinity is an error rather than a silently wrong number),
 * bytes become base64, timestamps and durations their JSON strings, map keys strings.
 *
 * Known limit: evaluation is synchronous on the server's event loop, so the registry's timeout
 * cannot cut it short, and nested comprehensions are quadratic (`data.map(x, data.filter(y, y < x))`
 * over 2,000 items takes about 5 s). Running it in a worker thread that is terminated at the
 * timeout is the fix, once tools run outside the request path.
 */
export function createJsonTransformTool(): Tool {
  return {
    name: "json.transform",
    version: NATIVE_TOOL_VERSION,
    description:
      "Evaluates a CEL expression over JSON data bound as `data` (standard library and string extensions), " +
      "for example `data.items.filter(i, i.price > 10).map(i, i.name)`. Whole JSON numbers are CEL ints, others doubles.",
    inputs: [
      { name: "data", type: "", required: true, description: "any JSON value, bound as `data`" },
      { name: "expression", type: "string", required: true, description: "the CEL expression" },
    ],
    outputs: [{ name: "result", type: "", required: true, description: "the expression's value as JSON" }],
    runtime: nativeRuntime("jsonTransform", 30_000),
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    invoke: async (input) => ({ result: evaluate(String(input.expression), input.data ?? null) }),
  };
}

function evaluate(expression: string, data: JsonValue): JsonValue {
  let program: ReturnType<typeof plan>;
  try {
    program = plan(env, parse(expression));
  } catch (error) {
    throw invalidInput(`json.transform: expression does not parse: ${error instanceof Error ? error.message : String(error)}`);
  }
  const value = program({ data: toCel(data) });
  if (isCelError(value)) throw new ToolError("failed", `json.transform: evaluating the expression failed: ${value.message}`);
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
    if (!Number.isFinite(value)) throw new ToolError("failed", `json.transform: ${path} is ${value}, which JSON cannot hold`);
    return value;
  }
  if (isCelUint(value)) return safeNumber(value.value, path);
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (isCelList(value)) return [...value].map((item, index) => fromCel(item, `${path}[${index}]`));
  if (isCelMap(value)) {
    const object: JsonObject = {};
    for (const [key, item] of value) {
      const name = isCelUint(key) ? String(key.value) : String(key);
      Object.defineProperty(object, name, { value: fromCel(item, `${path}[${JSON.stringify(name)}]`), enumerable: true, writable: true, configurable: true });
    }
    return object;
  }
  if (isCelType(value)) return value.name;
  if (isReflectMessage(value)) return toJson(value.desc, value.message) as JsonValue;
  throw new ToolError("failed", `json.transform: ${path} has a value JSON cannot hold`);
}

function safeNumber(value: bigint, path: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new ToolError("failed", `json.transform: ${path} is ${value}, beyond the ±2^53 that a JSON number holds exactly`);
  }
  return Number(value);
}
