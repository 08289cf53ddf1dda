import type { JsonObject, JsonValue } from "./cel-json.js";
import type { DocumentReader } from "./document-reader.js";
import { suggest } from "./document-reader.js";
import { compileCondition, readRetry } from "./parse-fields.js";
import { readPrimitive } from "./parse-primitives.js";
import { PRIMITIVES } from "./script-document.js";
import type { Primitive, RetryPolicy, Step, StepCommon } from "./script-document.js";

/**
 * Reads step lists: the keys every step shares, then its one primitive (parse-primitives.ts),
 * which reads its child step lists back through `readSteps`. Ids are collected across the whole
 * script to enforce uniqueness; `iterateNames` carries the `as` names of enclosing loops.
 */

const COMMON_KEYS = ["id", "name", "when", "timeout", "retry", "continueOnError"] as const;
export const STEP_KEYS: readonly string[] = [...COMMON_KEYS, ...PRIMITIVES];

/** Container steps (decide, iterate, parallel) nest at most this deep. */
export const MAX_STEP_DEPTH = 16;

export interface StepContext {
  reader: DocumentReader;
  /** Step id → pointer of the step that has it. */
  ids: Map<string, string>;
  depth: number;
  /** `as` names of enclosing iterate steps, outermost first. */
  iterateNames: readonly string[];
  /** Reads a child step list; parse-primitives.ts calls back through it (no import cycle). */
  readSteps: (context: StepContext, pointer: string, value: JsonValue | undefined) => Step[];
}

export function readSteps(context: StepContext, pointer: string, value: JsonValue | undefined): Step[] {
  const list = context.reader.list(pointer, value, 1);
  if (list === undefined) return [];
  if (context.depth > MAX_STEP_DEPTH) {
    context.reader.report(pointer, `steps are nested more than ${MAX_STEP_DEPTH} levels deep`);
    return [];
  }
  const steps: Step[] = [];
  list.forEach((item, index) => {
    const step = readStep(context, `${pointer}/${index}`, item);
    if (step !== undefined) steps.push(step);
  });
  return steps;
}

function readStep(context: StepContext, pointer: string, value: JsonValue): Step | undefined {
  const { reader } = context;
  const raw = reader.object(pointer, value, STEP_KEYS);
  if (raw === undefined) return undefined;
  const id = readId(context, pointer, raw);
  const primitive = onePrimitive(reader, pointer, raw);
  const common = readCommon(context, pointer, raw, id ?? "");
  if (primitive === undefined || common === undefined) return undefined;
  checkApplicability(reader, pointer, raw, primitive, common);
  const body = readPrimitive(context, `${pointer}/${primitive}`, raw[primitive] as JsonValue, primitive, common.id);
  return body === undefined || id === undefined ? undefined : ({ ...common, ...body } as Step);
}

function readId(context: StepContext, pointer: string, raw: JsonObject): string | undefined {
  const value = context.reader.required(raw, pointer, "id");
  if (value === undefined) return undefined;
  const id = context.reader.name(`${pointer}/id`, value, "id");
  if (id === undefined) return undefined;
  const first = context.ids.get(id);
  if (first !== undefined)
    return context.reader.fail(`${pointer}/id`, `id "${id}" is already used by the step at ${first}`);
  context.ids.set(id, pointer);
  return id;
}

/**
 * The step's primitive: exactly one of PRIMITIVES. When none is present but an unknown key was
 * close to one (`exectue`), the unknown-key report already says so and this one stays silent.
 */
function onePrimitive(reader: DocumentReader, pointer: string, raw: JsonObject): Primitive | undefined {
  const present = PRIMITIVES.filter((name) => Object.hasOwn(raw, name));
  for (const extra of present.slice(1)) {
    reader.report(
      `${pointer}/${extra}`,
      `a step has exactly one primitive; this one already has "${present[0]}"`,
      "key",
    );
  }
  if (present.length > 0) return present[0];
  const misspelt = Object.keys(raw).some((key) => !STEP_KEYS.includes(key) && suggest(key, PRIMITIVES) !== undefined);
  if (!misspelt) reader.report(pointer, `a step needs one primitive: ${PRIMITIVES.join(", ")}`);
  return undefined;
}

function readCommon(context: StepContext, pointer: string, raw: JsonObject, id: string): StepCommon | undefined {
  const { reader } = context;
  const before = reader.problems.length;
  const name = Object.hasOwn(raw, "name")
    ? reader.string(`${pointer}/name`, raw.name, { nonEmpty: true, maxLength: 200 })
    : id;
  const when = Object.hasOwn(raw, "when")
    ? compileCondition(reader, `${pointer}/when`, raw.when as JsonValue, id)
    : undefined;
  const timeout = Object.hasOwn(raw, "timeout") ? reader.duration(`${pointer}/timeout`, raw.timeout) : undefined;
  const retry: RetryPolicy | undefined = Object.hasOwn(raw, "retry")
    ? readRetry(reader, `${pointer}/retry`, raw.retry as JsonValue)
    : undefined;
  const continueOnError = Object.hasOwn(raw, "continueOnError")
    ? reader.boolean(`${pointer}/continueOnError`, raw.continueOnError)
    : false;
  if (reader.problems.length > before) return undefined;
  return {
    id,
    name: name ?? id,
    ...(when === undefined ? {} : { when }),
    ...(timeout === undefined ? {} : { timeout }),
    ...(retry === undefined ? {} : { retry }),
    continueOnError: continueOnError ?? false,
  };
}

/** Which common keys make sense for which primitive (docs/script-dsl.md, "Timeouts and retries"). */
function checkApplicability(
  reader: DocumentReader,
  pointer: string,
  raw: JsonObject,
  primitive: Primitive,
  common: StepCommon,
): void {
  const body = raw[primitive];
  const llm =
    primitive === "decide" &&
    typeof body === "object" &&
    body !== null &&
    !Array.isArray(body) &&
    body.strategy === "llm";
  if (
    common.timeout !== undefined &&
    !(primitive === "execute" || llm || primitive === "iterate" || primitive === "parallel")
  ) {
    const hint =
      primitive === "approval"
        ? "; use approval.timeout"
        : primitive === "decide"
          ? '; a decide with strategy "rule" makes no call'
          : "";
    reader.report(`${pointer}/timeout`, `timeout does not apply to ${primitive} steps${hint}`, "key");
  }
  if (common.retry !== undefined && !(primitive === "execute" || llm)) {
    reader.report(
      `${pointer}/retry`,
      'retry applies only to execute steps and decide steps with strategy "llm"',
      "key",
    );
  }
  if (primitive === "fail" && common.continueOnError) {
    reader.report(`${pointer}/continueOnError`, "a fail step with continueOnError would never fail", "key");
  }
}
