import { isJsonObject } from "./cel-json.js";
import type { JsonObject, JsonValue } from "./cel-json.js";
import { DurationError, parseDuration } from "./duration.js";
import type { ScriptProblem } from "./script-validation-error.js";
import { escapePointer } from "./templates.js";
import { positionOf } from "./yaml-source.js";
import type { SourceTree } from "./yaml-source.js";

/**
 * Typed reads of a document's JSON tree that record a problem (JSON Pointer, line, column,
 * message) instead of stopping, so one pass reports everything. Each read returns undefined when
 * the value is missing or wrong; callers carry on with what they have.
 */

/** Names: step ids, branch names, `as` names, variable names. */
export const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;
export const MAX_NAME_LENGTH = 64;

/**
 * Words CEL will not read as a name. After a dot (`steps.<id>`, `vars.<name>`, a branch name in
 * `steps.p.output.<name>`) only the literals and `in` fail to parse; as a bare identifier (an
 * iterate `as` name) every reserved word of the CEL spec does.
 */
const CEL_NOT_SELECTABLE = new Set(["false", "in", "null", "true"]);
const CEL_RESERVED = new Set([
  ...CEL_NOT_SELECTABLE,
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

export class DocumentReader {
  readonly problems: ScriptProblem[] = [];

  constructor(private readonly tree: SourceTree) {}

  /** Records a problem at `pointer` (at its key when `at` is "key", for unknown or extra keys). */
  report(pointer: string, message: string, at: "key" | "value" = "value"): void {
    this.problems.push({ path: pointer, ...positionOf(this.tree, pointer, at), message });
  }

  /**
   * An object whose keys are all in `allowed` (or any keys, for maps such as `set.values`);
   * unknown keys are reported with a suggestion.
   */
  object(pointer: string, value: JsonValue | undefined, allowed: readonly string[] | "any"): JsonObject | undefined {
    if (!isJsonObject(value)) return this.wrongType(pointer, value, "an object");
    if (allowed !== "any") this.knownKeys(pointer, value, allowed);
    return value;
  }

  /** Reports every key of `object` that is not in `allowed`. */
  knownKeys(pointer: string, object: JsonObject, allowed: readonly string[]): void {
    for (const key of Object.keys(object)) {
      if (!allowed.includes(key)) this.report(`${pointer}/${escapePointer(key)}`, unknownKey(key, allowed), "key");
    }
  }

  /** A member that must be present; reported as `<pointer>/<key>: is required` when absent. */
  required(object: JsonObject, pointer: string, key: string): JsonValue | undefined {
    if (!Object.hasOwn(object, key)) {
      this.report(`${pointer}/${escapePointer(key)}`, "is required");
      return undefined;
    }
    return object[key];
  }

  string(
    pointer: string,
    value: JsonValue | undefined,
    options: { nonEmpty?: boolean; maxLength?: number } = {},
  ): string | undefined {
    if (typeof value !== "string") return this.wrongType(pointer, value, "a string");
    // Names and descriptions are stored as text, which cannot hold U+0000 (values can: they are JSON).
    if (value.includes("\0")) return this.fail(pointer, "must not contain the NUL character (U+0000)");
    if (options.nonEmpty === true && value.trim() === "") return this.fail(pointer, "must not be empty");
    if (options.maxLength !== undefined && value.length > options.maxLength)
      return this.fail(pointer, `must be at most ${options.maxLength} characters`);
    return value;
  }

  boolean(pointer: string, value: JsonValue | undefined): boolean | undefined {
    return typeof value === "boolean" ? value : this.wrongType(pointer, value, "true or false");
  }

  integer(pointer: string, value: JsonValue | undefined, min: number, max: number): number | undefined {
    if (typeof value !== "number" || !Number.isInteger(value)) return this.wrongType(pointer, value, "an integer");
    if (value < min || value > max) return this.fail(pointer, `must be between ${min} and ${max}, not ${value}`);
    return value;
  }

  oneOf<const T extends string>(pointer: string, value: JsonValue | undefined, choices: readonly T[]): T | undefined {
    if (typeof value === "string" && (choices as readonly string[]).includes(value)) return value as T;
    const suggestion = typeof value === "string" ? suggest(value, choices) : undefined;
    const hint = suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`;
    return this.fail(
      pointer,
      `must be one of ${choices.map((choice) => `"${choice}"`).join(", ")}, not ${describeValue(value)}${hint}`,
    );
  }

  /** A duration string (duration.ts) in milliseconds, greater than zero. */
  duration(pointer: string, value: JsonValue | undefined): number | undefined {
    if (typeof value === "number")
      return this.fail(pointer, `must be a duration string such as "30s"; a bare number has no unit`);
    if (typeof value !== "string") return this.wrongType(pointer, value, 'a duration string such as "30s"');
    try {
      const ms = parseDuration(value, pointer);
      return ms > 0 ? ms : this.fail(pointer, "must be longer than zero");
    } catch (error) {
      if (error instanceof DurationError) return this.fail(pointer, error.reason);
      throw error;
    }
  }

  /** A name (see nameProblem); `what` says what it names (`id`, `branch name`). */
  name(
    pointer: string,
    value: JsonValue | undefined,
    what: string,
    usedAs: "selector" | "identifier" = "selector",
  ): string | undefined {
    const text = this.string(pointer, value);
    if (text === undefined) return undefined;
    const problem = nameProblem(text, what, usedAs);
    return problem === undefined ? text : this.fail(pointer, problem);
  }

  list(pointer: string, value: JsonValue | undefined, minItems: number): JsonValue[] | undefined {
    if (!Array.isArray(value)) return this.wrongType(pointer, value, "a list");
    if (value.length < minItems)
      return this.fail(pointer, `must have at least ${minItems} ${minItems === 1 ? "item" : "items"}`);
    return value;
  }

  fail(pointer: string, message: string): undefined {
    this.report(pointer, message);
    return undefined;
  }

  /** A missing value (undefined) was already reported by `required`; say nothing twice. */
  private wrongType(pointer: string, value: JsonValue | undefined, expected: string): undefined {
    return value === undefined ? undefined : this.fail(pointer, `must be ${expected}, not ${describeType(value)}`);
  }
}

/**
 * Why `text` cannot be a name, or undefined: it must match NAME_PATTERN, and CEL must be able to
 * read it where it is used: after a dot ("selector": ids, variable and branch names) or alone
 * ("identifier": an iterate `as` name).
 */
export function nameProblem(
  text: string,
  what: string,
  usedAs: "selector" | "identifier" = "selector",
): string | undefined {
  if (!NAME_PATTERN.test(text) || text.length > MAX_NAME_LENGTH) {
    return `${what} ${JSON.stringify(text)} must be 1 to ${MAX_NAME_LENGTH} lowercase letters, digits or "_", starting with a letter`;
  }
  if ((usedAs === "identifier" ? CEL_RESERVED : CEL_NOT_SELECTABLE).has(text))
    return `${what} ${JSON.stringify(text)} is a reserved word of the expression language`;
  return undefined;
}

/** `unknown key "exectue" (did you mean "execute"?)`, or the list of keys when nothing is close. */
export function unknownKey(key: string, allowed: readonly string[]): string {
  const suggestion = suggest(key, allowed);
  if (suggestion !== undefined) return `unknown key ${JSON.stringify(key)} (did you mean "${suggestion}"?)`;
  return `unknown key ${JSON.stringify(key)}; expected ${allowed.map((name) => `"${name}"`).join(", ")}`;
}

/**
 * The closest candidate to a misspelt word: the same word in another case or separator style
 * (`max_concurrency` → `maxConcurrency`), else the nearest by edit distance within a third of its
 * length (at least 1, at most 3).
 */
export function suggest(word: string, candidates: Iterable<string>): string | undefined {
  const fold = (text: string) => text.toLowerCase().replace(/[-_\s]/g, "");
  let best: string | undefined;
  let bestDistance = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  for (const candidate of candidates) {
    if (fold(candidate) === fold(word)) return candidate;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= bestDistance && (best === undefined || distance < bestDistance)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Damerau-Levenshtein distance (optimal string alignment): a swap of neighbours costs 1. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = value;
    }
  }
  return at(a.length, b.length);
}

export function describeType(value: JsonValue | undefined): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return value ? "true" : "false";
    default:
      return "an object";
  }
}

function describeValue(value: JsonValue | undefined): string {
  return typeof value === "string" ? JSON.stringify(value) : describeType(value);
}
