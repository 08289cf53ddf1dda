import { describe, expect, it } from "vitest";
import type { JsonValue } from "./cel-json.js";
import { CONTAINER_COST, DEFAULT_EXPRESSION_COST_LIMIT, DEFAULT_EXPRESSION_LIMITS } from "./cost-meter.js";
import { BindingScope, compileExpression, ExpressionLimitError } from "./expressions.js";
import type { ExpressionBindings, ExpressionLimits } from "./expressions.js";
import { compileTemplate } from "./templates.js";

const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);
const NESTED = "inputs.l.all(a, inputs.l.all(b, inputs.l.all(c, a + b + c >= 0)))";

function scopeOf(
  inputs: JsonValue,
  limits: ExpressionLimits = DEFAULT_EXPRESSION_LIMITS,
  steps: ExpressionBindings["steps"] = {},
): BindingScope {
  return new BindingScope({ inputs, steps, env: {}, thread: { id: "t", metadata: {} }, vars: {}, limits });
}

/** The units an expression spends, evaluated with a fresh scope and no practical limit. */
function unitsOf(source: string, inputs: JsonValue): number {
  const scope = scopeOf(inputs, { cost: Number.MAX_SAFE_INTEGER, timeMs: 60_000 });
  compileExpression(source, "/x").evaluate(scope);
  return scope.meter.units;
}

function limitError(evaluate: () => unknown): ExpressionLimitError {
  try {
    evaluate();
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionLimitError);
    return error as ExpressionLimitError;
  }
  throw new Error("the evaluation ended within its limits");
}

describe("the cost limit", () => {
  it("stops three nested comprehensions over 300 items, naming the step, the field and the limit", () => {
    const expression = compileExpression(NESTED, { pointer: "/steps/0/set/values/check", step: "check" });
    const scope = scopeOf({ l: numbers(300) }, { cost: DEFAULT_EXPRESSION_COST_LIMIT, timeMs: 600_000 });
    const error = limitError(() => expression.evaluate(scope));
    expect(error.message).toBe(
      `step "check" at /steps/0/set/values/check: expression "${NESTED}" failed: it exceeded the cost limit of ${DEFAULT_EXPRESSION_COST_LIMIT} units`,
    );
    // Stopped at the limit, not after the 27 million iterations.
    expect(scope.meter.units).toBeGreaterThan(DEFAULT_EXPRESSION_COST_LIMIT);
    expect(scope.meter.units).toBeLessThan(DEFAULT_EXPRESSION_COST_LIMIT + 100);
  });

  it("charges what is evaluated: the same units for the same bindings, growing with the iterations", () => {
    expect(unitsOf("inputs.l.map(x, x * 2)", { l: numbers(3) })).toBe(
      unitsOf("inputs.l.map(x, x * 2)", { l: numbers(3) }),
    );
    // Fixed part: the loop node, `inputs.l`, the accumulator and the result (5), reading the list
    // (1 + CONTAINER_COST) and its elements (1 each); each iteration: its condition and step nodes (7).
    expect(unitsOf("inputs.l.map(x, x * 2)", { l: numbers(3) })).toBe(5 + 1 + CONTAINER_COST + 3 * (1 + 7));
    const [small, large] = [unitsOf(NESTED, { l: numbers(10) }), unitsOf(NESTED, { l: numbers(20) })];
    expect(large / small).toBeGreaterThan(7);
  });

  it("charges strings and lists by their size", () => {
    const short = unitsOf("inputs.s.contains('y')", { s: "x".repeat(10) });
    const long = unitsOf("inputs.s.contains('y')", { s: "x".repeat(1_000_000) });
    expect(long - short).toBeGreaterThanOrEqual(99_999);
    expect(
      unitsOf("inputs.l == inputs.l", { l: numbers(10_000) }) - unitsOf("inputs.l == inputs.l", { l: numbers(10) }),
    ).toBeGreaterThanOrEqual(2 * 9_990);
    // The size of a list is known without reading it.
    expect(unitsOf("size(inputs.l)", { l: numbers(10_000) })).toBe(unitsOf("size(inputs.l)", { l: numbers(10) }));
  });

  it("refuses a replace or a join whose result would be huge before running it", () => {
    const unlimitedTime = { cost: DEFAULT_EXPRESSION_COST_LIMIT, timeMs: 600_000 };
    const replace = compileExpression("inputs.s.replace('x', inputs.s)", "/x");
    expect(limitError(() => replace.evaluate(scopeOf({ s: "x".repeat(2_000) }, unlimitedTime))).message).toContain(
      "cost limit",
    );
    const join = compileExpression("inputs.l.map(x, inputs.s).join('')", "/x");
    expect(
      limitError(() => join.evaluate(scopeOf({ l: numbers(1_000), s: "x".repeat(100_000) }, unlimitedTime))).message,
    ).toContain("cost limit");
    expect(replace.evaluate(scopeOf({ s: "xx" }))).toBe("xxxx");
    // Each replacement rescans the result: 3,000 of them in 3,000 characters are charged as the
    // work they are, though the result is short.
    const rescan = compileExpression("inputs.s.replace('x', 'y')", "/x");
    expect(limitError(() => rescan.evaluate(scopeOf({ s: "x".repeat(3_000) }, unlimitedTime))).message).toContain(
      "cost limit",
    );
    expect(rescan.evaluate(scopeOf({ s: "x".repeat(300) }))).toBe("y".repeat(300));
  });

  it("lets the expressions of one scope share one budget", () => {
    const each = unitsOf("inputs.l.all(x, x >= 0)", { l: numbers(1_000) });
    const limits = { cost: Math.floor(each * 1.5), timeMs: 60_000 };
    const template = compileTemplate("${inputs.l.all(x, x >= 0)} and ${inputs.l.all(x, x >= 0)}", {
      pointer: "/steps/2/execute/input/text",
      step: "both",
    });
    expect(compileExpression("inputs.l.all(x, x >= 0)", "/x").evaluate(scopeOf({ l: numbers(1_000) }, limits))).toBe(
      true,
    );
    expect(limitError(() => template.evaluate(scopeOf({ l: numbers(1_000) }, limits))).message).toMatch(
      /^step "both" at \/steps\/2\/execute\/input\/text: .* the cost limit of \d+ units$/,
    );
  });
});

describe("the time limit", () => {
  it("stops an evaluation that runs longer, whatever its cost", () => {
    const scope = scopeOf({ l: numbers(300) }, { cost: Number.MAX_SAFE_INTEGER, timeMs: 20 });
    const error = limitError(() =>
      compileExpression(NESTED, { pointer: "/steps/0/when", step: "guard" }).evaluate(scope),
    );
    expect(error.message).toBe(
      `step "guard" at /steps/0/when: expression "${NESTED}" failed: it ran longer than the time limit of 20 ms`,
    );
  });
});

describe("lists and large bindings", () => {
  it("builds map and filter results in place: long lists cost in proportion and convert back", () => {
    const limits = { cost: 10_000_000, timeMs: 60_000 };
    const mapped = compileExpression("inputs.l.map(x, x + 1)", "/x").evaluate(
      scopeOf({ l: numbers(50_000) }, limits),
    ) as number[];
    expect([mapped.length, mapped[0], mapped.at(-1)]).toEqual([50_000, 1, 50_000]);
    const kept = compileExpression("inputs.l.filter(x, x % 2 == 1).map(x, x > 1, x * 10)", "/x").evaluate(
      scopeOf({ l: numbers(50_000) }, limits),
    ) as number[];
    expect([kept.length, kept[0], kept.at(-1)]).toEqual([24_999, 30, 499_990]);
    const [small, large] = [
      unitsOf("inputs.l.map(x, x + 1)", { l: numbers(10_000) }),
      unitsOf("inputs.l.map(x, x + 1)", { l: numbers(20_000) }),
    ];
    expect(large / small).toBeLessThan(2.01);
  });

  it("reads one field of a large step output without converting the rest, and passes an output on as it is", () => {
    const output = { total: 5, items: numbers(200_000).map((i) => ({ id: `item-${i}`, tags: ["a", "b"] })) };
    const steps = { big: { output, status: "completed" as const, error: null } };
    const field = scopeOf({}, DEFAULT_EXPRESSION_LIMITS, steps);
    expect(compileExpression("steps.big.output.total", "/x").evaluate(field)).toBe(5);
    expect(field.meter.units).toBeLessThan(50);
    const whole = scopeOf({}, DEFAULT_EXPRESSION_LIMITS, steps);
    expect(
      compileTemplate({ data: "${steps.big.output}", items: "${steps.big.output.items}" }, "/x").evaluate(whole),
    ).toEqual({ data: output, items: output.items });
    expect((compileExpression("steps.big.output", "/x").evaluate(whole) as object) === output).toBe(true);
    expect(whole.meter.units).toBeLessThan(50);
  });
});
