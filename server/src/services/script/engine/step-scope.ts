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

  /**
   * Takes over what a decide or parallel branch bound: later steps of this list may read the
   * steps nested in an earlier decide or parallel step, and the variables they set. (An
   * iteration's scope is never adopted: after the loop only the iterate step's output is seen.)
   */
  adopt(branch: StepScope): void {
    Object.assign(this.steps, branch.steps);
    Object.assign(this.vars, branch.vars);
  }

  bindings(): ExpressionBindings {
    return { ...this.base, steps: this.steps, vars: this.vars, locals: this.locals };
  }
}
