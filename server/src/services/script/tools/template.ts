import { describe, isJsonObject } from "./tool-input.js";
import type { JsonObject, JsonValue } from "./tool.js";

/**
 * The `{{ path }}` templates of `template.render`, deliberately small (no sections, loops or
 * helpers: json.transform is the tool for logic):
 * - `{{ user.name }}` inserts the value at a dotted path of `values`; a segment of digits indexes an
 *   array (`{{ items.0.title }}`); spaces inside the braces are optional.
 * - Strings are inserted as they are (no HTML escaping: the output is rarely HTML, and an escaped
 *   prompt or JSON body would be wrong), numbers and booleans as JSON writes them, null as nothing,
 *   objects and arrays as compact JSON.
 * - A path that does not resolve is an error naming the path and the segment that failed, never an
 *   empty string: a silently empty field in a prompt or request is the bug templates are known for.
 * - `\{{` writes a literal `{{`.
 */

export class TemplateError extends Error {
  override name = "TemplateError";
}

const TAG = /\\\{\{|\{\{([^{}]*)\}\}|\{\{/g;
const PATH = /^[A-Za-z_$][\w$-]*(?:\.(?:[A-Za-z_$][\w$-]*|\d+))*$/;

export function renderTemplate(template: string, values: JsonObject): string {
  return template.replace(TAG, (match: string, inner: string | undefined, offset: number) => {
    if (match === "\\{{") return "{{";
    const where = position(template, offset);
    if (inner === undefined)
      throw new TemplateError(`the {{ at ${where} is not closed by }} (write \\{{ for a literal {{)`);
    const path = inner.trim();
    if (!PATH.test(path))
      throw new TemplateError(`{{${inner}}} at ${where} is not a dotted path such as {{ user.name }}`);
    return format(lookup(values, path, where));
  });
}

function lookup(values: JsonObject, path: string, where: string): JsonValue {
  let current: JsonValue = values;
  let walked = "values";
  for (const segment of path.split(".")) {
    let next: JsonValue | undefined;
    if (Array.isArray(current)) {
      next = /^\d+$/.test(segment) ? current[Number(segment)] : undefined;
    } else if (isJsonObject(current) && Object.hasOwn(current, segment)) {
      next = current[segment];
    }
    if (next === undefined) {
      const container = Array.isArray(current)
        ? `an array of ${current.length}`
        : isJsonObject(current)
          ? "an object"
          : describe(current);
      throw new TemplateError(
        `{{ ${path} }} at ${where}: ${walked} has no ${JSON.stringify(segment)} (it is ${container})`,
      );
    }
    current = next;
    walked = `${walked}.${segment}`;
  }
  return current;
}

function format(value: JsonValue): string {
  if (value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** `line 3, column 5` of `offset` (1-based), for error messages. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}
