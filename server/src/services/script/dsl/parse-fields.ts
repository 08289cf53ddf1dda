import type { JsonValue } from "./cel-json.js";
import { describeType } from "./document-reader.js";
import type { DocumentReader } from "./document-reader.js";
import { compileExpression, ExpressionSyntaxError } from "./expressions.js";
import type { CompiledExpression, ExpressionSite } from "./expressions.js";
import type { RetryPolicy } from "./script-document.js";
import { compileTemplate, TemplateSyntaxError, wholeExpression } from "./templates.js";
import type { CompiledTemplate } from "./templates.js";

/**
 * Field readers shared by the document and its steps: expressions, templates and retry policies.
 * Syntax errors become problems at the pointer of the string that holds them.
 */

export const RETRY_DEFAULTS = { maxAttempts: 3, backoff: "exponential", initialMs: 1_000, maxMs: 60_000 } as const;
export const MAX_RETRY_ATTEMPTS = 10;
export const MAX_RETRY_DELAY_MS = 3_600_000;

function site(pointer: string, stepId: string | undefined): ExpressionSite {
  return stepId === undefined || stepId === "" ? { pointer } : { pointer, step: stepId };
}

/** A template field (any JSON value; strings may hold `${…}`). */
export function compileField(
  reader: DocumentReader,
  pointer: string,
  value: JsonValue,
  stepId?: string,
): CompiledTemplate | undefined {
  try {
    return compileTemplate(value, site(pointer, stepId));
  } catch (error) {
    if (!(error instanceof TemplateSyntaxError)) throw error;
    for (const problem of error.errors) reader.report(problem.pointer, problem.detail);
    return undefined;
  }
}

/** A field that holds one CEL expression: a string, optionally wrapped in `${ }`. */
export function compileExpressionField(
  reader: DocumentReader,
  pointer: string,
  value: JsonValue | undefined,
  stepId?: string,
): CompiledExpression | undefined {
  if (value === undefined) return undefined; // reported as missing by the caller
  if (typeof value !== "string")
    return reader.fail(pointer, `must be a CEL expression (a string), not ${describeType(value)}`);
  try {
    return compileExpression(wholeExpression(value) ?? value, site(pointer, stepId));
  } catch (error) {
    if (!(error instanceof ExpressionSyntaxError)) throw error;
    return reader.fail(pointer, error.detail);
  }
}

/** A `when` guard: a CEL expression, or `true`/`false` as YAML gives them unquoted. */
export function compileCondition(
  reader: DocumentReader,
  pointer: string,
  value: JsonValue,
  stepId?: string,
): CompiledExpression | undefined {
  if (typeof value === "boolean") return compileExpression(String(value), site(pointer, stepId));
  return compileExpressionField(reader, pointer, value, stepId);
}

/**
 * A retry policy; omitted members take RETRY_DEFAULTS, and `max` defaults to the larger of one
 * minute and `initial`. `max` means something only with exponential backoff.
 */
export function readRetry(reader: DocumentReader, pointer: string, value: JsonValue): RetryPolicy | undefined {
  const raw = reader.object(pointer, value, ["maxAttempts", "backoff", "initial", "max"]);
  if (raw === undefined) return undefined;
  const before = reader.problems.length;
  const has = (key: string) => Object.hasOwn(raw, key);
  const maxAttempts = has("maxAttempts")
    ? reader.integer(`${pointer}/maxAttempts`, raw.maxAttempts, 1, MAX_RETRY_ATTEMPTS)
    : RETRY_DEFAULTS.maxAttempts;
  const backoff = has("backoff")
    ? reader.oneOf(`${pointer}/backoff`, raw.backoff, ["fixed", "exponential"])
    : RETRY_DEFAULTS.backoff;
  const delay = (key: "initial" | "max"): number | undefined => {
    const ms = reader.duration(`${pointer}/${key}`, raw[key]);
    return ms !== undefined && ms > MAX_RETRY_DELAY_MS ? reader.fail(`${pointer}/${key}`, "must be at most 1h") : ms;
  };
  const initialMs = has("initial") ? delay("initial") : RETRY_DEFAULTS.initialMs;
  let maxMs = initialMs === undefined ? undefined : Math.max(RETRY_DEFAULTS.maxMs, initialMs);
  if (has("max")) {
    if (backoff === "fixed") reader.report(`${pointer}/max`, 'max applies only to backoff "exponential"', "key");
    else maxMs = delay("max");
  }
  if (backoff === "fixed" && initialMs !== undefined) maxMs = initialMs;
  if (initialMs !== undefined && maxMs !== undefined && maxMs < initialMs)
    reader.report(`${pointer}/max`, "must not be shorter than initial");
  if (
    reader.problems.length > before ||
    maxAttempts === undefined ||
    backoff === undefined ||
    initialMs === undefined ||
    maxMs === undefined
  )
    return undefined;
  return { maxAttempts, backoff, initialMs, maxMs };
}
