import type { ExpressionBindings, StepBinding } from "../dsl/expressions.js";
import type { JsonValue } from "../dsl/script-document.js";

/**
 * What the expressions of one step list see. A list's scope is a copy of its parent's, so a
 * branch or an iteration adds its own `steps.<id>` and `vars` without leaking them to siblings
 * running at the same time; the enclosing list sees the container's output instead.
 */
export class StepScope {
  private constructor(
    private readonly base: Omit<ExpressionBindings, "steps" | "vars" | "locals">,
    readonly steps: Record<string, StepBinding>,
    readonly vars: Record<string, JsonValue>,
    readonly locals: Record<string, JsonValue>,
  ) {}

  static root(base: Omit<ExpressionBindings, "steps" | "vars" | "locals">): StepScope {
    return new StepScope(base, {}, {}, {});
  }

  /** A child scope: same view, its own additions; `locals` adds iteration variables. */
  child(locals: Record<string, JsonValue> = {}): StepScope {
    return new StepScope(this.base, { ...this.steps }, { ...this.vars }, { ...this.locals, ...locals });
  }

  bindings(): ExpressionBindings {
    return { ...this.base, steps: this.steps, vars: this.vars, locals: this.locals };
  }
}
