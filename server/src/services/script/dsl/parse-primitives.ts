import { isJsonObject } from "./cel-json.js";
import type { JsonObject, JsonValue } from "./cel-json.js";
import { CEL_TYPE_NAMES } from "./expression-references.js";
import { nameProblem } from "./document-reader.js";
import { compileExpressionField, compileField } from "./parse-fields.js";
import type { StepContext } from "./parse-steps.js";
import { MAX_ITERATE_CONCURRENCY } from "./script-document.js";
import type { DecideBranch, ParallelBranch, Primitive, Step, StepCommon, WaitSpec } from "./script-document.js";
import { escapePointer, wholeExpression } from "./templates.js";
import type { CompiledTemplate } from "./templates.js";

/**
 * Reads the body of each primitive (docs/script-dsl.md, "Primitives"). Returns the primitive's
 * part of the Step, or undefined after reporting what is wrong.
 */

/** The primitive part of a Step (`{primitive: "execute", execute: {…}}`), per member of the union. */
type StepBody = Step extends infer S ? (S extends Step ? Omit<S, keyof StepCommon> : never) : never;

/** Names an `as` may not take: the global bindings, `index`, and CEL's type names. */
const BOUND_NAMES = new Set(["inputs", "steps", "env", "thread", "vars", "index", ...CEL_TYPE_NAMES]);

/** `2024-05-01T09:00:00Z` or with an offset: a fixed time written in the document. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

export function readPrimitive(
  context: StepContext,
  pointer: string,
  value: JsonValue,
  primitive: Primitive,
  stepId: string,
): StepBody | undefined {
  const { reader } = context;
  const keys: Record<Primitive, readonly string[]> = {
    execute: ["tool", "input"],
    decide: ["strategy", "prompt", "model", "branches"],
    iterate: ["over", "as", "maxConcurrency", "steps"],
    parallel: ["branches", "failFast"],
    yield: ["value"],
    wait: ["for", "until"],
    approval: ["prompt", "timeout", "onTimeout"],
    set: ["values"],
    fail: ["message"],
  };
  const raw = reader.object(pointer, value, keys[primitive]);
  if (raw === undefined) return undefined;
  const before = reader.problems.length;
  const body = readBody(context, pointer, raw, primitive, stepId);
  return reader.problems.length > before ? undefined : body;
}

function readBody(
  context: StepContext,
  pointer: string,
  raw: JsonObject,
  primitive: Primitive,
  stepId: string,
): StepBody | undefined {
  const { reader } = context;
  const has = (key: string) => Object.hasOwn(raw, key);
  const at = (key: string) => `${pointer}/${key}`;
  const template = (key: string) => compileField(reader, at(key), raw[key] as JsonValue, stepId);
  const required = (key: string) => reader.required(raw, pointer, key);
  switch (primitive) {
    case "execute": {
      const tool = reader.string(at("tool"), required("tool"), { nonEmpty: true, maxLength: 200 });
      if (tool !== undefined && /\s/.test(tool))
        reader.report(at("tool"), `tool name ${JSON.stringify(tool)} must not contain spaces`);
      if (has("input") && !isObjectOrExpression(raw.input as JsonValue))
        reader.report(at("input"), 'must be an object, or a "${…}" expression giving one');
      const input = has("input") ? template("input") : compileField(reader, at("input"), {}, stepId);
      return tool === undefined || input === undefined ? undefined : { primitive, execute: { tool, input } };
    }
    case "decide":
      return readDecide(context, pointer, raw, stepId);
    case "iterate": {
      const over = compileExpressionField(reader, at("over"), required("over"), stepId);
      const as = readAs(context, at("as"), has("as") ? (raw.as as JsonValue) : undefined);
      const maxConcurrency = has("maxConcurrency")
        ? reader.integer(at("maxConcurrency"), raw.maxConcurrency, 1, MAX_ITERATE_CONCURRENCY)
        : 1;
      const inner = { ...context, depth: context.depth + 1, iterateNames: [...context.iterateNames, as ?? "item"] };
      const steps = context.readSteps(inner, at("steps"), required("steps"));
      if (over === undefined || as === undefined || maxConcurrency === undefined) return undefined;
      return { primitive, iterate: { over, as, maxConcurrency, steps } };
    }
    case "parallel": {
      const failFast = has("failFast") ? reader.boolean(at("failFast"), raw.failFast) : true;
      const branches = readBranches(
        context,
        at("branches"),
        required("branches"),
        ["name", "steps"],
        (_branch, name, steps): ParallelBranch => ({ name, steps }),
      );
      return failFast === undefined ? undefined : { primitive, parallel: { branches, failFast } };
    }
    case "yield": {
      const value = required("value") === undefined ? undefined : template("value");
      return value === undefined ? undefined : { primitive, yield: { value } };
    }
    case "wait":
      return readWait(context, pointer, raw, stepId);
    case "approval": {
      const prompt = has("prompt") ? template("prompt") : undefined;
      const timeoutMs = has("timeout") ? reader.duration(at("timeout"), raw.timeout) : undefined;
      const onTimeout = has("onTimeout") ? reader.oneOf(at("onTimeout"), raw.onTimeout, ["continue", "fail"]) : "fail";
      if (has("onTimeout") && !has("timeout")) reader.report(at("onTimeout"), "onTimeout needs a timeout", "key");
      if (onTimeout === undefined) return undefined;
      return {
        primitive,
        approval: {
          ...(prompt === undefined ? {} : { prompt }),
          ...(timeoutMs === undefined ? {} : { timeoutMs }),
          onTimeout,
        },
      };
    }
    case "set": {
      const given = required("values");
      const values = given === undefined ? undefined : reader.object(at("values"), given, "any");
      if (values === undefined) return undefined;
      if (Object.keys(values).length === 0) reader.report(at("values"), "must set at least one variable");
      const compiled: Record<string, CompiledTemplate> = {};
      for (const name of Object.keys(values)) {
        const key = `${at("values")}/${escapePointer(name)}`;
        const problem = nameProblem(name, "variable name");
        if (problem !== undefined) {
          reader.report(key, problem, "key");
          continue;
        }
        const value = compileField(reader, key, values[name] as JsonValue, stepId);
        if (value !== undefined)
          Object.defineProperty(compiled, name, { value, enumerable: true, writable: true, configurable: true });
      }
      return { primitive, set: { values: compiled } };
    }
    case "fail": {
      const message = required("message") === undefined ? undefined : template("message");
      return message === undefined ? undefined : { primitive, fail: { message } };
    }
  }
}

function readDecide(context: StepContext, pointer: string, raw: JsonObject, stepId: string): StepBody | undefined {
  const { reader } = context;
  const at = (key: string) => `${pointer}/${key}`;
  const strategy = Object.hasOwn(raw, "strategy")
    ? reader.oneOf(at("strategy"), raw.strategy, ["rule", "llm"])
    : "rule";
  const llm = strategy === "llm";
  for (const key of ["prompt", "model"]) {
    if (strategy === "rule" && Object.hasOwn(raw, key))
      reader.report(at(key), `${key} is used only by strategy "llm"`, "key");
  }
  if (llm && !Object.hasOwn(raw, "prompt")) reader.report(at("prompt"), 'is required with strategy "llm"');
  const prompt =
    llm && Object.hasOwn(raw, "prompt")
      ? compileField(reader, at("prompt"), raw.prompt as JsonValue, stepId)
      : undefined;
  const model =
    llm && Object.hasOwn(raw, "model")
      ? reader.string(at("model"), raw.model, { nonEmpty: true, maxLength: 200 })
      : undefined;
  let defaults = 0;
  const branches = readBranches(
    context,
    at("branches"),
    reader.required(raw, pointer, "branches"),
    ["name", "when", "description", "default", "steps"],
    (branch, name, steps, branchPointer): DecideBranch | undefined => {
      const isDefault = Object.hasOwn(branch, "default")
        ? reader.boolean(`${branchPointer}/default`, branch.default)
        : false;
      const description = Object.hasOwn(branch, "description")
        ? reader.string(`${branchPointer}/description`, branch.description, { maxLength: 2000 })
        : undefined;
      if (isDefault === true && ++defaults > 1)
        reader.report(`${branchPointer}/default`, "a decide step has at most one default branch");
      let when;
      if (Object.hasOwn(branch, "when")) {
        if (llm)
          reader.report(
            `${branchPointer}/when`,
            'when is a condition of strategy "rule"; with strategy "llm" describe the branch in description',
            "key",
          );
        else if (isDefault === true)
          reader.report(
            `${branchPointer}/when`,
            "a default branch has no condition: it is taken when no other branch matches",
            "key",
          );
        else when = compileExpressionField(reader, `${branchPointer}/when`, branch.when, stepId);
      } else if (strategy === "rule" && isDefault === false) {
        reader.report(`${branchPointer}/when`, "is required in a rule branch that is not the default");
      }
      if (isDefault === undefined) return undefined;
      return {
        name,
        ...(when === undefined ? {} : { when }),
        ...(description === undefined ? {} : { description }),
        default: isDefault,
        steps,
      };
    },
  );
  if (strategy === undefined) return undefined;
  return {
    primitive: "decide",
    decide: {
      strategy,
      ...(prompt === undefined ? {} : { prompt }),
      ...(model === undefined ? {} : { model }),
      branches,
    },
  };
}

function readWait(context: StepContext, pointer: string, raw: JsonObject, stepId: string): StepBody | undefined {
  const { reader } = context;
  const hasFor = Object.hasOwn(raw, "for");
  const hasUntil = Object.hasOwn(raw, "until");
  if (hasFor && hasUntil) return reader.fail(`${pointer}/until`, 'give either "for" or "until", not both');
  if (hasFor) {
    const forMs = reader.duration(`${pointer}/for`, raw.for);
    return forMs === undefined ? undefined : { primitive: "wait", wait: { forMs } };
  }
  if (!hasUntil) return reader.fail(pointer, 'needs "for" (a duration) or "until" (a time)');
  const until = raw.until;
  let wait: WaitSpec | undefined;
  if (typeof until === "string" && RFC3339.test(until)) {
    const untilMs = Date.parse(until);
    wait = Number.isNaN(untilMs)
      ? reader.fail(`${pointer}/until`, `${JSON.stringify(until)} is not a valid time`)
      : { untilMs };
  } else {
    const expression = compileExpressionField(reader, `${pointer}/until`, until, stepId);
    wait = expression === undefined ? undefined : { until: expression };
  }
  return wait === undefined ? undefined : { primitive: "wait", wait };
}

/** A list of named branches (decide, parallel): names unique within the step, steps read. */
function readBranches<B>(
  context: StepContext,
  pointer: string,
  value: JsonValue | undefined,
  keys: readonly string[],
  build: (branch: JsonObject, name: string, steps: Step[], branchPointer: string) => B | undefined,
): B[] {
  const { reader } = context;
  const list = value === undefined ? undefined : reader.list(pointer, value, 1);
  const names = new Set<string>();
  const branches: B[] = [];
  list?.forEach((item, index) => {
    const branchPointer = `${pointer}/${index}`;
    const branch = reader.object(branchPointer, item, keys);
    if (branch === undefined) return;
    const name = reader.name(`${branchPointer}/name`, reader.required(branch, branchPointer, "name"), "branch name");
    if (name !== undefined && names.has(name))
      reader.report(`${branchPointer}/name`, `branch name "${name}" is used twice in this step`);
    if (name !== undefined) names.add(name);
    const steps =
      keys.includes("default") && !Object.hasOwn(branch, "steps")
        ? []
        : context.readSteps(
            { ...context, depth: context.depth + 1 },
            `${branchPointer}/steps`,
            reader.required(branch, branchPointer, "steps"),
          );
    const built = name === undefined ? undefined : build(branch, name, steps, branchPointer);
    if (built !== undefined) branches.push(built);
  });
  return branches;
}

/** The `as` name of an iterate step (default `item`), which must not hide another name. */
function readAs(context: StepContext, pointer: string, value: JsonValue | undefined): string | undefined {
  const name = value === undefined ? "item" : context.reader.name(pointer, value, "as", "identifier");
  if (name === undefined) return undefined;
  if (BOUND_NAMES.has(name))
    return context.reader.fail(pointer, `as "${name}" would hide a name expressions already use; choose another`);
  if (context.iterateNames.includes(name)) {
    const which = value === undefined ? `as is "item" by default, which` : `as "${name}"`;
    return context.reader.fail(
      pointer,
      `${which} is already the item of an enclosing iterate step; choose another name`,
    );
  }
  return name;
}

function isObjectOrExpression(value: JsonValue): boolean {
  return isJsonObject(value) || (typeof value === "string" && wholeExpression(value) !== undefined);
}
