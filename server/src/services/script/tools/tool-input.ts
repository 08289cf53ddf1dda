import { invalidInput } from "./tool-error.js";
import type { JsonObject, JsonValue, ToolDefinition, ToolParamType } from "./tool.js";

/**
 * The generic input check every call goes through before a tool sees its input, so tools need not
 * repeat it: the input is a JSON object, every required input is there, every given input has its
 * declared type, and no input is unknown. Unknown names are refused rather than ignored because
 * they are nearly always typos (`chunk_size` for `chunkSize`) whose silent default would surprise.
 * Omitted optional inputs get their declared default. Messages name the input and the tool.
 */
export function checkToolInput(tool: ToolDefinition, input: unknown): JsonObject {
  if (!isJsonObject(input)) throw invalidInput(`${tool.name}: the input must be a JSON object, got ${describe(input)}`);
  const declared = new Map(tool.inputs.map((param) => [param.name, param]));
  for (const name of Object.keys(input)) {
    if (!declared.has(name)) {
      const known = tool.inputs.map((param) => param.name).join(", ");
      throw invalidInput(`${tool.name}: ${JSON.stringify(name)} is not an input of this tool (inputs: ${known})`);
    }
  }
  const checked: JsonObject = {};
  for (const param of tool.inputs) {
    const value = Object.hasOwn(input, param.name) ? input[param.name] : undefined;
    if (value === undefined) {
      if (param.required) throw invalidInput(`${tool.name}: input ${JSON.stringify(param.name)} is required`);
      if (param.defaultValue !== undefined) checked[param.name] = structuredClone(param.defaultValue);
      continue;
    }
    if (!hasType(value, param.type)) {
      throw invalidInput(
        `${tool.name}: input ${JSON.stringify(param.name)} must be ${typeWithArticle(param.type)}, got ${describe(value)}`,
      );
    }
    checked[param.name] = value;
  }
  return checked;
}

/** Whether `value` is of the JSON Schema type `type` (`integer` is a number with no fraction). */
export function hasType(value: JsonValue, type: ToolParamType): boolean {
  switch (type) {
    case "":
      return true;
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isSafeInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isJsonObject(value);
    case "array":
      return Array.isArray(value);
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value as an error message shows it: its type, and the value itself when it is short. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string")
    return value.length > 40
      ? `a string (${JSON.stringify(value.slice(0, 40))}…)`
      : `the string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

function typeWithArticle(type: ToolParamType): string {
  if (type === "") return "a JSON value";
  return type === "integer" || type === "object" || type === "array" ? `an ${type}` : `a ${type}`;
}
