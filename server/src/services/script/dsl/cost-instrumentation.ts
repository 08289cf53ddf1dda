import type { parse } from "@bufbuild/cel";
import { CONTAINER_COST } from "./cost-meter.js";
import { ACCUMULATOR, APPEND, ITERATION } from "./metered-env.js";

/**
 * Prepares a parsed expression for metered evaluation (cost-meter.ts), once, at compile time:
 *
 * - the number of nodes evaluated once per evaluation (the expression outside comprehension
 *   bodies; list and map literals count CONTAINER_COST more) is its fixed cost, charged when an
 *   evaluation starts;
 * - each comprehension's loop condition becomes `@iteration(condition, weight)`, where `weight`
 *   is the number of nodes of its body (condition and step), so that every iteration is charged
 *   for the nodes it evaluates, nested comprehensions by their own iterations;
 * - `map` and `filter` accumulate into a list of their own (`@accumulator()`, `@append(accu, x)`)
 *   instead of `accu + [x]`, which @bufbuild/cel evaluates as a nested concatenation: reading a
 *   list of n items built that way costs n² steps and overflows the stack past a few thousand.
 *
 * Macros are the only source of comprehensions (CEL has no syntax for them), so their shapes are
 * the ones the parser's macro expansion writes: an empty list as the accumulator's start, and a
 * step `accu + [x]`, or `test ? accu + [x] : accu`.
 */

type Expr = NonNullable<ReturnType<typeof parse>["expr"]>;
type Call = Extract<Expr["exprKind"], { case: "callExpr" }>["value"];

export interface InstrumentedExpression {
  readonly expr: Expr;
  /** Nodes evaluated once per evaluation: the fixed cost. */
  readonly fixedCost: number;
}

export function instrument(root: Expr): InstrumentedExpression {
  let nextId = maxId(root) + 1n;
  const node = (exprKind: Expr["exprKind"]): Expr => ({ $typeName: "cel.expr.Expr", id: nextId++, exprKind });
  const call = (fn: string, args: Expr[]): Expr =>
    node({ case: "callExpr", value: { $typeName: "cel.expr.Expr.Call", function: fn, args } });
  const int = (value: number): Expr =>
    node({
      case: "constExpr",
      value: { $typeName: "cel.expr.Constant", constantKind: { case: "int64Value", value: BigInt(value) } },
    });

  /** `accu + [x]` → `@append(accu, x)`; anything else unchanged. */
  const appendInPlace = (expr: Expr, accuVar: string): Expr => {
    const kind = expr.exprKind;
    if (kind.case !== "callExpr") return expr;
    const [left, right] = kind.value.args;
    if (
      kind.value.function === "_+_" &&
      isIdent(left, accuVar) &&
      right?.exprKind.case === "listExpr" &&
      right.exprKind.value.elements.length === 1
    ) {
      return call(APPEND, [left!, right.exprKind.value.elements[0]!]);
    }
    if (kind.value.function === "_?_:_" && kind.value.args.length === 3) {
      return withCall(expr, {
        ...kind.value,
        args: [kind.value.args[0]!, appendInPlace(kind.value.args[1]!, accuVar), kind.value.args[2]!],
      });
    }
    return expr;
  };

  /** The rewritten expression and the nodes it evaluates once. */
  const visit = (expr: Expr): [Expr, number] => {
    const kind = expr.exprKind;
    switch (kind.case) {
      case "callExpr": {
        const [target, targetCost] = kind.value.target === undefined ? [undefined, 0] : visit(kind.value.target);
        const args = kind.value.args.map(visit);
        const cost = 1 + targetCost + args.reduce((sum, [, c]) => sum + c, 0);
        return [withCall(expr, { ...kind.value, target, args: args.map(([arg]) => arg) }), cost];
      }
      case "selectExpr": {
        if (kind.value.operand === undefined) return [expr, 1];
        const [operand, cost] = visit(kind.value.operand);
        return [{ ...expr, exprKind: { case: "selectExpr", value: { ...kind.value, operand } } }, 1 + cost];
      }
      case "listExpr": {
        const elements = kind.value.elements.map(visit);
        return [
          { ...expr, exprKind: { case: "listExpr", value: { ...kind.value, elements: elements.map(([e]) => e) } } },
          1 + CONTAINER_COST + elements.reduce((sum, [, c]) => sum + c, 0),
        ];
      }
      case "structExpr": {
        let cost = 1 + CONTAINER_COST;
        const entries = kind.value.entries.map((entry) => {
          const key = entry.keyKind.case === "mapKey" ? visit(entry.keyKind.value) : undefined;
          const value = entry.value === undefined ? undefined : visit(entry.value);
          cost += (key?.[1] ?? 0) + (value?.[1] ?? 0);
          return {
            ...entry,
            keyKind: key === undefined ? entry.keyKind : { case: "mapKey" as const, value: key[0] },
            value: value?.[0],
          };
        });
        return [{ ...expr, exprKind: { case: "structExpr", value: { ...kind.value, entries } } }, cost];
      }
      case "comprehensionExpr": {
        const loop = kind.value;
        if (!loop.iterRange || !loop.accuInit || !loop.loopCondition || !loop.loopStep || !loop.result)
          return [expr, 1];
        const accumulates =
          loop.accuInit.exprKind.case === "listExpr" && loop.accuInit.exprKind.value.elements.length === 0;
        const [iterRange, rangeCost] = visit(loop.iterRange);
        const [accuInit, initCost] = accumulates ? [call(ACCUMULATOR, []), 1] : visit(loop.accuInit);
        const [condition, conditionCost] = visit(loop.loopCondition);
        const [loopStep, stepCost] = visit(accumulates ? appendInPlace(loop.loopStep, loop.accuVar) : loop.loopStep);
        const [result, resultCost] = visit(loop.result);
        const loopCondition = call(ITERATION, [condition, int(1 + conditionCost + stepCost)]);
        const value = { ...loop, iterRange, accuInit, loopCondition, loopStep, result };
        return [{ ...expr, exprKind: { case: "comprehensionExpr", value } }, 1 + rangeCost + initCost + resultCost];
      }
      default:
        return [expr, 1];
    }
  };

  const [expr, fixedCost] = visit(root);
  return { expr, fixedCost };
}

function withCall(expr: Expr, value: Call): Expr {
  return { ...expr, exprKind: { case: "callExpr", value } };
}

function isIdent(expr: Expr | undefined, name: string): boolean {
  return expr?.exprKind.case === "identExpr" && expr.exprKind.value.name === name;
}

function maxId(expr: Expr | undefined): bigint {
  if (expr === undefined) return 0n;
  let max = BigInt(expr.id);
  const consider = (child: Expr | undefined) => {
    const id = maxId(child);
    if (id > max) max = id;
  };
  const kind = expr.exprKind;
  switch (kind.case) {
    case "callExpr":
      consider(kind.value.target);
      kind.value.args.forEach(consider);
      break;
    case "selectExpr":
      consider(kind.value.operand);
      break;
    case "listExpr":
      kind.value.elements.forEach(consider);
      break;
    case "structExpr":
      for (const entry of kind.value.entries) {
        if (BigInt(entry.id) > max) max = BigInt(entry.id);
        if (entry.keyKind.case === "mapKey") consider(entry.keyKind.value);
        consider(entry.value);
      }
      break;
    case "comprehensionExpr":
      [
        kind.value.iterRange,
        kind.value.accuInit,
        kind.value.loopCondition,
        kind.value.loopStep,
        kind.value.result,
      ].forEach(consider);
      break;
  }
  return max;
}
