import { isCelError, parse, plan } from "@bufbuild/cel";
import type { CelInput, CelResult } from "@bufbuild/cel";
import { celToJson, CelJsonError } from "./cel-json.js";
import type { JsonValue } from "./cel-json.js";
import { BindingScope } from "./binding-scope.js";
import type { ExpressionBindings } from "./binding-scope.js";
import { instrument } from "./cost-instrumentation.js";
import { ExpressionLimitExceeded } from "./cost-meter.js";
import { BASE_ENV, METERED_ENV } from "./metered-env.js";
import { referencesOf } from "./expression-references.js";
import type { ExpressionReferences } from "./expression-references.js";

/**
 * CEL expressions of a script (`when`, `iterate.over`, `wait.until` and the `${…}` parts of
 * templates), compiled once when the script is parsed (`parse` + `plan` of @bufbuild/cel) and
 * evaluated many times against a thread's bindings.
 *
 * The environment is CEL's standard library plus the `strings` extension (`lowerAscii`,
 * `split`, `join`, `replace`, `indexOf`, …). There is no `now()`: an expression's value depends
 * only on its bindings, so a resumed thread evaluates it to the same value.
 *
 * Compilation checks syntax and that every called function exists; which names an expression
 * may use is checked by the parser against the step's scope (see script-scope.ts), from the
 * `references` computed here.
 *
 * Every evaluation is bounded in cost and time (cost-meter.ts): the expressions evaluated with
 * one BindingScope share its meter, and past a limit the evaluation stops and fails its step.
 */

export type { ExpressionBindings, StepBinding } from "./binding-scope.js";
export { BindingScope } from "./binding-scope.js";
export type { ExpressionLimits } from "./cost-meter.js";

/** Where an expression sits: the JSON Pointer of its field, and the id of its step if any. */
export interface ExpressionSite {
  pointer: string;
  step?: string;
}

/** Calls the planner resolves itself rather than through the function table. */
const SPECIAL_FORMS = new Set(["_&&_", "_||_", "_?_:_", "_[_]", "@not_strictly_false"]);

/** An expression that does not compile; `pointer` names the field, `expression` the text. */
export class ExpressionSyntaxError extends Error {
  override name = "ExpressionSyntaxError";
  constructor(
    readonly pointer: string,
    readonly expression: string,
    readonly reason: string,
  ) {
    super(`${pointer}: expression ${quoteExpression(expression)}: ${reason}`);
  }

  /** The message without the pointer: `expression "a +": syntax error at column 3: …`. */
  get detail(): string {
    return `expression ${quoteExpression(this.expression)}: ${this.reason}`;
  }
}

/** An evaluation that failed; the message says which step, field and expression. */
export class ExpressionEvaluationError extends Error {
  override name = "ExpressionEvaluationError";
  constructor(
    readonly site: ExpressionSite,
    readonly expression: string,
    readonly reason: string,
  ) {
    super(`${describeSite(site)}: expression ${quoteExpression(expression)} failed: ${reason}`);
  }
}

/** An evaluation stopped by its cost or time limit; the message names the limit. */
export class ExpressionLimitError extends ExpressionEvaluationError {
  override name = "ExpressionLimitError";
}

type Program = (bindings: Record<string, CelInput>) => CelResult;

/** A compiled expression. `toJSON` gives its source, so a parsed document prints as it was written. */
export class CompiledExpression {
  private constructor(
    readonly source: string,
    readonly site: ExpressionSite,
    readonly references: ExpressionReferences,
    private readonly program: Program,
    /** Nodes evaluated once per evaluation, charged when it starts. */
    private readonly fixedCost: number,
  ) {}

  /** Parses and plans `source`; throws ExpressionSyntaxError. */
  static compile(source: string, site: ExpressionSite): CompiledExpression {
    if (source.trim() === "") throw new ExpressionSyntaxError(site.pointer, source, "empty expression");
    let parsed;
    try {
      parsed = parse(source);
    } catch (error) {
      throw new ExpressionSyntaxError(site.pointer, source, syntaxReason(error));
    }
    const references = referencesOf(parsed.expr);
    for (const name of references.functions) {
      if (!SPECIAL_FORMS.has(name) && BASE_ENV.funcs.find(name) === undefined) {
        throw new ExpressionSyntaxError(site.pointer, source, `unknown function "${name}"`);
      }
    }
    if (parsed.expr === undefined) throw new ExpressionSyntaxError(site.pointer, source, "empty expression");
    const metered = instrument(parsed.expr);
    const program = plan(METERED_ENV, metered.expr) as Program;
    return new CompiledExpression(source, site, references, program, metered.fixedCost);
  }

  /** Evaluates to JSON; throws ExpressionEvaluationError naming the site. */
  evaluate(bindings: ExpressionBindings | BindingScope): JsonValue {
    const scope = bindings instanceof BindingScope ? bindings : new BindingScope(bindings);
    const meter = scope.meter;
    let result: CelResult;
    try {
      // Inside the meter: converting what the expression reads is charged too (cel-json.ts).
      result = meter.run(() => {
        meter.charge(this.fixedCost);
        return this.program(scope.celBindings(this.references));
      });
    } catch (error) {
      if (error instanceof ExpressionLimitExceeded)
        throw new ExpressionLimitError(this.site, this.source, error.message);
      // CEL reports errors as values; anything thrown is still this expression's failure.
      throw this.failure(scope, error instanceof Error ? error.message : String(error));
    }
    // The evaluator turns what is thrown inside it into an error value: the meter says why.
    if (meter.failure !== undefined) throw new ExpressionLimitError(this.site, this.source, meter.failure.message);
    if (isCelError(result)) throw this.failure(scope, result.message);
    try {
      return celToJson(result);
    } catch (error) {
      if (error instanceof CelJsonError) throw this.failure(scope, error.message);
      throw error;
    }
  }

  /** Evaluates a condition (`when`): the result must be a boolean, nothing is truthy by accident. */
  evaluateCondition(bindings: ExpressionBindings | BindingScope): boolean {
    const value = this.evaluate(bindings);
    if (typeof value !== "boolean") {
      throw new ExpressionEvaluationError(
        this.site,
        this.source,
        `a condition must be true or false, got ${describeJson(value)}`,
      );
    }
    return value;
  }

  toJSON(): string {
    return this.source;
  }

  /** Turns CEL's terse messages into ones that name the missing binding or step. */
  private failure(scope: BindingScope, celMessage: string): ExpressionEvaluationError {
    const unbound = [...this.references.names].filter((name) => !scope.has(name));
    let reason = celMessage;
    if (unbound.length > 0 && /unresolved attribute/.test(celMessage)) {
      reason = `${unbound.map((name) => `"${name}"`).join(", ")} ${unbound.length === 1 ? "is" : "are"} not bound here`;
    } else {
      const missing = /^(?:field not found|no such key): (.+)$/.exec(celMessage)?.[1];
      if (missing !== undefined && this.references.steps.has(missing) && !scope.hasStep(missing)) {
        reason = `steps.${missing} is not available: step "${missing}" has not run (use has(steps.${missing}) to test)`;
      }
    }
    return new ExpressionEvaluationError(this.site, this.source, reason);
  }
}

/** `compileExpression(source, "/steps/0/when")` or with a site naming the step. */
export function compileExpression(source: string, site: ExpressionSite | string): CompiledExpression {
  return CompiledExpression.compile(source, typeof site === "string" ? { pointer: site } : site);
}

/** `step "fetch" at /steps/0/execute/input/id`, or just the pointer outside steps. */
export function describeSite(site: ExpressionSite): string {
  return site.step === undefined ? site.pointer || "/" : `step "${site.step}" at ${site.pointer}`;
}

function syntaxReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const located = /^<input>:(\d+):(\d+): (.*)$/s.exec(message);
  if (located === null) return `syntax error: ${message}`;
  const [, line, column, detail] = located;
  return `syntax error at ${line === "1" ? "" : `line ${line}, `}column ${column}: ${detail}`;
}

function quoteExpression(expression: string): string {
  return JSON.stringify(expression.length > 120 ? `${expression.slice(0, 120)}…` : expression);
}

function describeJson(value: JsonValue): string {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
