import type { parse } from "@bufbuild/cel";

/**
 * What a CEL expression refers to, read from its syntax tree once at compile time:
 *
 * - `names`: free identifiers (`inputs`, `steps`, `item`, …), minus the variables that macros
 *   such as `list.map(x, …)` bind;
 * - `steps` / `vars`: the ids used as `steps.<id>` or `steps["<id>"]` (and the same for `vars`);
 *   `dynamicSteps` / `dynamicVars` when the map is used in any other way (`steps[name]`,
 *   `size(vars)`), where no static check is possible;
 * - `functions`: every function and method name called.
 *
 * The parser checks `names`, `steps` and `vars` against the step's scope; the evaluator uses them
 * to convert only the bindings an expression reads.
 */

type Expr = ReturnType<typeof parse>["expr"];

export interface ExpressionReferences {
  readonly names: ReadonlySet<string>;
  readonly steps: ReadonlySet<string>;
  readonly dynamicSteps: boolean;
  readonly vars: ReadonlySet<string>;
  readonly dynamicVars: boolean;
  readonly functions: ReadonlySet<string>;
}

/** Type names CEL resolves itself (`type(x) == int`): never bindings. */
export const CEL_TYPE_NAMES: ReadonlySet<string> = new Set([
  "bool",
  "bytes",
  "double",
  "dyn",
  "int",
  "list",
  "map",
  "null_type",
  "string",
  "type",
  "uint",
]);

/** The two maps whose keys (step ids, variable names) the parser checks. */
const KEYED_MAPS = ["steps", "vars"] as const;
type KeyedMap = (typeof KEYED_MAPS)[number];

export function referencesOf(root: Expr): ExpressionReferences {
  const names = new Set<string>();
  const functions = new Set<string>();
  const keys: Record<KeyedMap, Set<string>> = { steps: new Set(), vars: new Set() };
  const dynamic: Record<KeyedMap, boolean> = { steps: false, vars: false };

  /** `steps.x` or `steps["x"]` with `steps` free: the map and the key. */
  const staticKey = (
    operand: Expr | undefined,
    key: string | undefined,
    bound: ReadonlySet<string>,
  ): [KeyedMap, string] | undefined => {
    if (operand?.exprKind.case !== "identExpr" || key === undefined) return undefined;
    const name = operand.exprKind.value.name;
    return (KEYED_MAPS as readonly string[]).includes(name) && !bound.has(name) ? [name as KeyedMap, key] : undefined;
  };

  const visit = (expr: Expr | undefined, bound: ReadonlySet<string>): void => {
    if (expr === undefined) return;
    const kind = expr.exprKind;
    switch (kind.case) {
      case "identExpr": {
        const name = kind.value.name;
        if (bound.has(name) || CEL_TYPE_NAMES.has(name)) return;
        names.add(name);
        if ((KEYED_MAPS as readonly string[]).includes(name)) dynamic[name as KeyedMap] = true;
        return;
      }
      case "selectExpr": {
        const found = staticKey(kind.value.operand, kind.value.field, bound);
        if (found !== undefined) {
          names.add(found[0]);
          keys[found[0]].add(found[1]);
          return;
        }
        visit(kind.value.operand, bound);
        return;
      }
      case "callExpr": {
        const call = kind.value;
        functions.add(call.function);
        if (call.function === "_[_]" && call.target === undefined) {
          const index = call.args[1]?.exprKind;
          const found = staticKey(
            call.args[0],
            index?.case === "constExpr" && index.value.constantKind.case === "stringValue"
              ? index.value.constantKind.value
              : undefined,
            bound,
          );
          if (found !== undefined) {
            names.add(found[0]);
            keys[found[0]].add(found[1]);
            return;
          }
        }
        visit(call.target, bound);
        for (const arg of call.args) visit(arg, bound);
        return;
      }
      case "listExpr":
        for (const element of kind.value.elements) visit(element, bound);
        return;
      case "structExpr":
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === "mapKey") visit(entry.keyKind.value, bound);
          visit(entry.value, bound);
        }
        return;
      case "comprehensionExpr": {
        const loop = kind.value;
        visit(loop.iterRange, bound);
        visit(loop.accuInit, bound);
        const inner = new Set(bound);
        for (const name of [loop.iterVar, loop.iterVar2, loop.accuVar]) if (name !== "") inner.add(name);
        visit(loop.loopCondition, inner);
        visit(loop.loopStep, inner);
        visit(loop.result, inner);
        return;
      }
      default:
        return;
    }
  };

  visit(root, new Set());
  return {
    names,
    steps: keys.steps,
    dynamicSteps: dynamic.steps,
    vars: keys.vars,
    dynamicVars: dynamic.vars,
    functions,
  };
}
