import { celMap } from "@bufbuild/cel";
import type { CelInput } from "@bufbuild/cel";
import { jsonToCel } from "./cel-json.js";
import { CostMeter, DEFAULT_EXPRESSION_LIMITS } from "./cost-meter.js";
import type { ExpressionLimits } from "./cost-meter.js";
import type { JsonValue } from "./cel-json.js";
import type { ExpressionReferences } from "./expression-references.js";

/**
 * The names an expression can read while a thread runs (docs/script-dsl.md, "Bindings"):
 *
 * - `inputs`: the thread's input (CreateThread `input_json`, defaults applied);
 * - `steps.<id>`: `{output, status, error}` of every step that has finished and is in scope;
 * - `env`: the environment variables loaded into the thread (empty without `load_env`);
 * - `thread`: `{id, metadata}`;
 * - `vars`: the values bound by `set` steps;
 * - `locals`: inside `iterate`, the `as` name (default `item`) and `index`, innermost loop last.
 *
 * `limits` is not a name: it bounds the evaluations made with these bindings (cost-meter.ts).
 */
export interface ExpressionBindings {
  inputs: JsonValue;
  steps: Readonly<Record<string, StepBinding>>;
  env: Readonly<Record<string, string>>;
  thread: { id: string; metadata: Readonly<Record<string, string>> };
  vars: Readonly<Record<string, JsonValue>>;
  locals?: Readonly<Record<string, JsonValue>>;
  limits?: ExpressionLimits;
}

/**
 * What `steps.<id>` holds once the step finished: `completed` with its output; `failed` (only
 * seen when the step has continueOnError) with `output: null` and the error message; `skipped`
 * (its `when` was false) with `output: null`.
 */
export interface StepBinding {
  output: JsonValue;
  status: "completed" | "failed" | "skipped";
  error: string | null;
}

/**
 * One set of bindings, converted to CEL lazily and at most once: an expression converts only the
 * roots it reads, and for `steps`/`vars` only the entries it names (unless it indexes them
 * dynamically). Reuse one scope for the expressions evaluated at the same moment (a template, the
 * branch conditions of a decide) so that a large step output is converted once.
 *
 * A scope is also one evaluation moment's budget: its expressions share one cost meter, so that
 * a template with many expressions, or a `set` with many values, is bounded as a whole.
 */
export class BindingScope {
  private readonly converted = new Map<string, CelInput>();
  readonly meter: CostMeter;

  constructor(readonly bindings: ExpressionBindings) {
    this.meter = new CostMeter(bindings.limits ?? DEFAULT_EXPRESSION_LIMITS);
  }

  /** Whether `name` is bound at all (a local such as `item` may not be). */
  has(name: string): boolean {
    return this.rootValue(name) !== undefined;
  }

  hasStep(id: string): boolean {
    return Object.hasOwn(this.bindings.steps, id);
  }

  /** The CEL bindings for one expression's references; names not bound are left out. */
  celBindings(references: ExpressionReferences): Record<string, CelInput> {
    const result: Record<string, CelInput> = {};
    for (const name of references.names) {
      const value =
        name === "steps" && !references.dynamicSteps
          ? this.keyedSubset("steps", references.steps)
          : name === "vars" && !references.dynamicVars
            ? this.keyedSubset("vars", references.vars)
            : this.root(name);
      if (value !== undefined) result[name] = value;
    }
    return result;
  }

  private root(name: string): CelInput | undefined {
    const cached = this.converted.get(name);
    if (cached !== undefined) return cached;
    const value = this.rootValue(name);
    if (value === undefined) return undefined;
    const cel = jsonToCel(value);
    this.converted.set(name, cel);
    return cel;
  }

  /** A map with only the named entries of `steps` or `vars`, each converted once. */
  private keyedSubset(map: "steps" | "vars", keys: ReadonlySet<string>): CelInput {
    const source: Readonly<Record<string, JsonValue | StepBinding>> = this.bindings[map];
    const entries = new Map<string, CelInput>();
    for (const key of keys) {
      if (!Object.hasOwn(source, key)) continue;
      const cacheKey = `${map}\u0000${key}`;
      let cel = this.converted.get(cacheKey);
      if (cel === undefined) {
        cel = jsonToCel(asJson(source[key] as JsonValue | StepBinding));
        this.converted.set(cacheKey, cel);
      }
      entries.set(key, cel);
    }
    return celMap(entries);
  }

  private rootValue(name: string): JsonValue | undefined {
    const b = this.bindings;
    switch (name) {
      case "inputs":
        return b.inputs;
      case "steps":
        return Object.fromEntries(Object.entries(b.steps).map(([id, step]) => [id, asJson(step)]));
      case "env":
        return { ...b.env };
      case "thread":
        return { id: b.thread.id, metadata: { ...b.thread.metadata } };
      case "vars":
        return { ...b.vars };
    }
    return b.locals !== undefined && Object.hasOwn(b.locals, name) ? b.locals[name] : undefined;
  }
}

function asJson(value: JsonValue | StepBinding): JsonValue {
  return value as JsonValue;
}
