import { describe, expect, it } from "vitest";
import type { JsonValue } from "./cel-json.js";
import { BindingScope, compileExpression, ExpressionEvaluationError, ExpressionSyntaxError } from "./expressions.js";
import type { ExpressionBindings } from "./expressions.js";

const bindings: ExpressionBindings = {
  inputs: {
    count: 3,
    ratio: 2.5,
    name: "Ada",
    tags: ["a", "b"],
    big: 2 ** 53 + 2,
    nested: JSON.parse('{"__proto__": 1, "deep": {"ok": true}}') as JsonValue,
  },
  steps: {
    fetch: {
      output: { id: "T-1", priority: "P1", comments: [{ text: "hi" }, { text: "yo" }] },
      status: "completed",
      error: null,
    },
    flaky: { output: null, status: "failed", error: "tool timed out" },
  },
  env: { REGION: "eu-west" },
  thread: { id: "th_1", metadata: { team: "support" } },
  vars: { attempts: 2 },
};

function evaluate(source: string, extra: Partial<ExpressionBindings> = {}): JsonValue {
  return compileExpression(source, { pointer: "/steps/0/execute/input/x", step: "demo" }).evaluate({
    ...bindings,
    ...extra,
  });
}

function evaluationError(source: string, extra: Partial<ExpressionBindings> = {}): string {
  try {
    evaluate(source, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionEvaluationError);
    return (error as ExpressionEvaluationError).message;
  }
  throw new Error(`${source} evaluated without an error`);
}

function syntaxError(source: string): string {
  try {
    compileExpression(source, "/steps/1/when");
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionSyntaxError);
    return (error as ExpressionSyntaxError).message;
  }
  throw new Error(`${source} compiled`);
}

describe("JSON values in and out", () => {
  it.each<[string, JsonValue]>([
    ["inputs.name", "Ada"],
    ["inputs.count", 3],
    ["inputs.ratio", 2.5],
    ["inputs.tags", ["a", "b"]],
    ["inputs.nested.deep", { ok: true }],
    ['inputs.nested["__proto__"]', 1],
    ["steps.fetch.output.comments.map(c, c.text)", ["hi", "yo"]],
    ["steps.flaky.status", "failed"],
    ["steps.flaky.error", "tool timed out"],
    ["{'a': [1, 2.5, true, null]}", { a: [1, 2.5, true, null] }],
    ["{1: 'one', true: 'yes'}", { "1": "one", true: "yes" }],
    ["b'hi'", "aGk="],
    ["7u", 7],
    ["timestamp('2024-05-01T09:00:00Z') + duration('90m')", "2024-05-01T10:30:00Z"],
    ["duration('1h')", "3600s"],
    ["type(1)", "int"],
    ["-0.0", 0],
    ["env.REGION", "eu-west"],
    ["thread.id + '/' + thread.metadata.team", "th_1/support"],
    ["vars.attempts + 1", 3],
    ["'a,b'.split(',')", ["a", "b"]],
    ["inputs.name.lowerAscii()", "ada"],
  ])("%s → %j", (source, expected) => {
    expect(evaluate(source)).toEqual(expected);
  });

  it("keeps a __proto__ key of a result as a plain key", () => {
    const result = evaluate("{'__proto__': 1}") as Record<string, JsonValue>;
    expect(Object.keys(result)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });
});

describe("numbers: JSON integers are CEL ints", () => {
  it.each<[string, JsonValue]>([
    ["inputs.count + 1", 4],
    ["inputs.count == 3", true],
    ["inputs.count == 3.0", true],
    ["size(inputs.tags) == 2", true],
    ["inputs.tags[inputs.count - 2]", "b"],
    ["inputs.ratio > 2", true],
    ["inputs.count < inputs.ratio + 1.0", true],
    ["5 / 2", 2],
    ["double(5) / 2.0", 2.5],
    ["inputs.ratio * 2.0", 5],
    ["int(inputs.ratio)", 2],
  ])("%s → %j", (source, expected) => {
    expect(evaluate(source)).toEqual(expected);
  });

  it("treats an integer beyond 2^53 as a double, and refuses to return an int it cannot keep exactly", () => {
    expect(evaluate("inputs.big > 9007199254740992.0")).toBe(true);
    expect(evaluationError("9007199254740993")).toBe(
      'step "demo" at /steps/0/execute/input/x: expression "9007199254740993" failed: the integer result 9007199254740993 is outside ±2^53 and cannot be kept exactly in JSON',
    );
  });

  it("reports CEL's own type errors", () => {
    expect(evaluationError("inputs.count + 0.5")).toBe(
      `step "demo" at /steps/0/execute/input/x: expression "inputs.count + 0.5" failed: found no matching overload for '_+_' applied to '(int, double)'`,
    );
    expect(evaluationError("1.0 / 0.0")).toBe(
      'step "demo" at /steps/0/execute/input/x: expression "1.0 / 0.0" failed: the result Infinity is not a finite number, which JSON cannot hold',
    );
    expect(evaluationError("9223372036854775807 + 1")).toMatch(/failed: int overflow/);
  });
});

describe("missing bindings", () => {
  it("names a local that is not bound", () => {
    expect(evaluationError("item.text")).toBe(
      'step "demo" at /steps/0/execute/input/x: expression "item.text" failed: "item" is not bound here',
    );
    expect(evaluate("item.text + string(index)", { locals: { item: { text: "a" }, index: 4 } })).toBe("a4");
  });

  it("names a step that has not run", () => {
    expect(evaluationError("steps.later.output")).toBe(
      'step "demo" at /steps/0/execute/input/x: expression "steps.later.output" failed: steps.later is not available: step "later" has not run (use has(steps.later) to test)',
    );
    expect(evaluate("has(steps.later) ? 1 : 2")).toBe(2);
    expect(evaluate("has(steps.fetch) ? 1 : 2")).toBe(1);
  });

  it("passes CEL's message for a missing key", () => {
    expect(evaluationError("inputs.nope")).toMatch(
      /^step "demo" at \/steps\/0\/execute\/input\/x: expression "inputs.nope" failed: .*nope/,
    );
  });

  it("reads steps and vars dynamically when the expression indexes them with a variable", () => {
    expect(evaluate("steps[inputs.key].output.id", { inputs: { key: "fetch" } })).toBe("T-1");
    expect(evaluate("size(vars)")).toBe(1);
  });

  it("evaluates against a shared scope", () => {
    const scope = new BindingScope(bindings);
    expect(compileExpression("inputs.count", "/a").evaluate(scope)).toBe(3);
    expect(compileExpression("inputs.count * 2", "/b").evaluate(scope)).toBe(6);
  });
});

describe("conditions", () => {
  it("needs a boolean", () => {
    const when = compileExpression("steps.fetch.output.priority == 'P1'", { pointer: "/steps/1/when", step: "page" });
    expect(when.evaluateCondition(bindings)).toBe(true);
    expect(() =>
      compileExpression("inputs.count", { pointer: "/steps/1/when", step: "page" }).evaluateCondition(bindings),
    ).toThrow(
      'step "page" at /steps/1/when: expression "inputs.count" failed: a condition must be true or false, got 3',
    );
  });
});

describe("compilation", () => {
  it.each([
    ["a +", '/steps/1/when: expression "a +": syntax error at column 3: found + but expecting end of input'],
    ["", '/steps/1/when: expression "": empty expression'],
    ["sise(inputs.tags)", '/steps/1/when: expression "sise(inputs.tags)": unknown function "sise"'],
    ["inputs.name.upper()", '/steps/1/when: expression "inputs.name.upper()": unknown function "upper"'],
    [
      "a &&\n  b)",
      '/steps/1/when: expression "a &&\\n  b)": syntax error at line 2, column 4: found ) but expecting end of input',
    ],
  ])("refuses %j", (source, message) => {
    expect(syntaxError(source)).toBe(message);
  });

  it("lists what an expression refers to", () => {
    const expression = compileExpression(
      "steps.fetch.output.comments.filter(c, c.text != item) && has(steps['route'].output) && vars.total > index && type(x) == int && inputs.a",
      "/x",
    );
    const references = expression.references;
    expect([...references.names].sort()).toEqual(["index", "inputs", "item", "steps", "vars", "x"]);
    expect([...references.steps].sort()).toEqual(["fetch", "route"]);
    expect([...references.vars]).toEqual(["total"]);
    expect(references.dynamicSteps).toBe(false);
    expect(compileExpression("steps[name]", "/x").references.dynamicSteps).toBe(true);
    expect(compileExpression("size(vars)", "/x").references.dynamicVars).toBe(true);
  });

  it("prints as its source", () => {
    expect(JSON.stringify({ when: compileExpression("a == 1", "/when") })).toBe('{"when":"a == 1"}');
  });
});
