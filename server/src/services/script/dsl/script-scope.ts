import { suggest } from "./document-reader.js";
import type { DocumentReader } from "./document-reader.js";
import type { CompiledExpression } from "./expressions.js";
import type { ScriptDocument, Step } from "./script-document.js";

/**
 * Checks what expressions refer to, exactly, against the scope rules of docs/script-dsl.md
 * ("Bindings"):
 *
 * - a name must be a binding: `inputs`, `steps`, `env`, `thread`, `vars`, and inside `iterate`
 *   its `as` name (default `item`) and `index`;
 * - `steps.<id>` must name a step of the script that has finished whenever the expression runs:
 *   an earlier step of the same list or of an enclosing list, or a step nested in an earlier
 *   decide or parallel step. Not: the step itself or one enclosing it (not finished yet), a later
 *   step, a step in another branch of the same decide or parallel, or a step inside an iterate
 *   body seen from outside it (those outputs are per iteration: use the iterate step's output);
 * - `vars.<name>` must be bound by some `set` step; two branches of one parallel step may not set
 *   the same variable (they run at the same time).
 *
 * Dynamic uses (`steps[name]`, `vars[key]`) cannot be checked and are left to run time.
 */

const GLOBAL_NAMES = ["inputs", "steps", "env", "thread", "vars"];

interface Enclosing {
  id: string;
  primitive: Step["primitive"];
  slot: number;
}

interface Scope {
  visible: ReadonlySet<string>;
  locals: readonly string[];
  /** The step whose expression this is; undefined for the document's `output`. */
  step?: Step;
  chain: readonly Enclosing[];
}

export function checkScopes(reader: DocumentReader, document: ScriptDocument): void {
  const chains = new Map<string, readonly Enclosing[]>();
  const varNames = new Set<string>();
  indexSteps(document.steps, [], chains, varNames);

  const check = (expression: CompiledExpression, scope: Scope) =>
    checkExpression(reader, expression, scope, chains, varNames);

  const walk = (
    steps: readonly Step[],
    outer: ReadonlySet<string>,
    locals: readonly string[],
    chain: readonly Enclosing[],
  ): Set<string> => {
    const visible = new Set(outer);
    const produced = new Set<string>();
    for (const step of steps) {
      const scope: Scope = { visible: new Set(visible), locals, step, chain };
      for (const expression of ownExpressions(step)) check(expression, scope);
      const finished = new Set<string>([step.id]);
      if (step.primitive === "decide" || step.primitive === "parallel") {
        const branches = step.primitive === "decide" ? step.decide.branches : step.parallel.branches;
        branches.forEach((branch, slot) => {
          for (const id of walk(branch.steps, scope.visible, locals, [
            ...chain,
            { id: step.id, primitive: step.primitive, slot },
          ]))
            finished.add(id);
        });
        if (step.primitive === "parallel") checkParallelVars(reader, step.parallel.branches);
      } else if (step.primitive === "iterate") {
        walk(
          step.iterate.steps,
          scope.visible,
          [...locals, step.iterate.as],
          [...chain, { id: step.id, primitive: "iterate", slot: 0 }],
        );
      }
      for (const id of finished) {
        visible.add(id);
        produced.add(id);
      }
    }
    return produced;
  };

  const topLevel = walk(document.steps, new Set(), [], []);
  if (document.output !== undefined) {
    for (const expression of document.output.expressions)
      check(expression, { visible: topLevel, locals: [], chain: [] });
  }
}

/** The expressions a step evaluates before or instead of running children, in the step's scope. */
function ownExpressions(step: Step): CompiledExpression[] {
  const found: CompiledExpression[] = step.when === undefined ? [] : [step.when];
  switch (step.primitive) {
    case "execute":
      return [...found, ...step.execute.input.expressions];
    case "decide":
      return [
        ...found,
        ...(step.decide.prompt?.expressions ?? []),
        ...step.decide.branches.flatMap((branch) => (branch.when === undefined ? [] : [branch.when])),
      ];
    case "iterate":
      return [...found, step.iterate.over];
    case "yield":
      return [...found, ...step.yield.value.expressions];
    case "wait":
      return "until" in step.wait ? [...found, step.wait.until] : found;
    case "approval":
      return [...found, ...(step.approval.prompt?.expressions ?? [])];
    case "set":
      return [...found, ...Object.values(step.set.values).flatMap((value) => value.expressions)];
    case "fail":
      return [...found, ...step.fail.message.expressions];
    case "parallel":
      return found;
  }
}

function indexSteps(
  steps: readonly Step[],
  chain: readonly Enclosing[],
  chains: Map<string, readonly Enclosing[]>,
  varNames: Set<string>,
): void {
  for (const step of steps) {
    chains.set(step.id, chain);
    if (step.primitive === "set") for (const name of Object.keys(step.set.values)) varNames.add(name);
    const lists =
      step.primitive === "decide"
        ? step.decide.branches.map((b) => b.steps)
        : step.primitive === "parallel"
          ? step.parallel.branches.map((b) => b.steps)
          : step.primitive === "iterate"
            ? [step.iterate.steps]
            : [];
    lists.forEach((list, slot) =>
      indexSteps(list, [...chain, { id: step.id, primitive: step.primitive, slot }], chains, varNames),
    );
  }
}

function checkExpression(
  reader: DocumentReader,
  expression: CompiledExpression,
  scope: Scope,
  chains: ReadonlyMap<string, readonly Enclosing[]>,
  varNames: ReadonlySet<string>,
): void {
  const report = (message: string) =>
    reader.report(expression.site.pointer, `expression ${JSON.stringify(expression.source)}: ${message}`);
  const names = [...GLOBAL_NAMES, ...(scope.locals.length > 0 ? [...new Set(scope.locals), "index"] : [])];
  for (const name of expression.references.names) {
    if (names.includes(name)) continue;
    const hint = suggest(name, names);
    const where =
      name === "item" || name === "index"
        ? `; "${name}" is bound only inside iterate steps`
        : hint === undefined
          ? ""
          : ` (did you mean "${hint}"?)`;
    report(`unknown name "${name}"${where}`);
  }
  for (const id of expression.references.steps) {
    const chain = chains.get(id);
    if (chain === undefined) {
      const hint = suggest(id, chains.keys());
      report(`no step "${id}" in this script${hint === undefined ? "" : ` (did you mean "${hint}"?)`}`);
    } else if (!scope.visible.has(id)) {
      report(whyHidden(id, chain, scope));
    }
  }
  for (const name of expression.references.vars) {
    if (varNames.has(name)) continue;
    const hint = suggest(name, varNames);
    report(`no set step binds vars.${name}${hint === undefined ? "" : ` (did you mean "vars.${hint}"?)`}`);
  }
}

function whyHidden(id: string, target: readonly Enclosing[], scope: Scope): string {
  const here =
    scope.step === undefined ? [] : [...scope.chain, { id: scope.step.id, primitive: scope.step.primitive, slot: -1 }];
  if (scope.step?.id === id) return `step "${id}" cannot use its own output; it has not finished`;
  if (scope.chain.some((enclosing) => enclosing.id === id))
    return `step "${id}" encloses this expression; its output exists only when it has finished`;
  const loop = target.find(
    (enclosing) => enclosing.primitive === "iterate" && !here.some((other) => other.id === enclosing.id),
  );
  if (loop !== undefined)
    return `step "${id}" runs inside iterate step "${loop.id}", once per item; use steps.${loop.id}.output`;
  const fork = target.find(
    (enclosing, depth) =>
      here[depth]?.id === enclosing.id && here[depth]?.slot !== enclosing.slot && here[depth]?.slot !== -1,
  );
  if (fork?.primitive === "parallel")
    return `step "${id}" runs in another branch of parallel step "${fork.id}", at the same time as this one`;
  if (fork !== undefined) return `step "${id}" is in another branch of decide step "${fork.id}"; only one branch runs`;
  return `step "${id}" runs after this one`;
}

/** Variables set by `set` steps of a list, outside iterate bodies (those are per iteration). */
function setNames(steps: readonly Step[], into: Map<string, string>): void {
  for (const step of steps) {
    if (step.primitive === "set")
      for (const [name, value] of Object.entries(step.set.values))
        if (!into.has(name)) into.set(name, value.site.pointer);
    if (step.primitive === "decide") for (const branch of step.decide.branches) setNames(branch.steps, into);
    if (step.primitive === "parallel") for (const branch of step.parallel.branches) setNames(branch.steps, into);
  }
}

function checkParallelVars(reader: DocumentReader, branches: readonly { name: string; steps: Step[] }[]): void {
  const owner = new Map<string, string>();
  for (const branch of branches) {
    const names = new Map<string, string>();
    setNames(branch.steps, names);
    for (const [name, pointer] of names) {
      const first = owner.get(name);
      if (first !== undefined)
        reader.report(
          pointer,
          `vars.${name} is also set in branch "${first}" of this parallel step; branches run at the same time`,
        );
      else owner.set(name, branch.name);
    }
  }
}
