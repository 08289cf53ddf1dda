import { describe, expect, it } from "vitest";
import type { JsonValue } from "./cel-json.js";
import type { ExpressionBindings } from "./expressions.js";
import { ExpressionEvaluationError } from "./expressions.js";
import { compileTemplate, evaluateTemplate, TemplateSyntaxError, wholeExpression } from "./templates.js";

const bindings: ExpressionBindings = {
  inputs: { ticket: "T-9", count: 2, ratio: 0.5, tags: ["x", "y"], meta: { a: 1 } },
  steps: { fetch: { output: { body: "hello", priority: "P1" }, status: "completed", error: null } },
  env: {},
  thread: { id: "th_7", metadata: {} },
  vars: {},
};

function render(template: JsonValue): JsonValue {
  return evaluateTemplate(compileTemplate(template, { pointer: "/steps/0/execute/input", step: "call" }), bindings);
}

describe("whole-string expressions keep the value's type", () => {
  it.each<[JsonValue, JsonValue]>([
    ["${inputs.count}", 2],
    ["${ inputs.ratio }", 0.5],
    ["${inputs.tags}", ["x", "y"]],
    ["${inputs.meta}", { a: 1 }],
    ["${steps.fetch.output.priority == 'P1'}", true],
    ["${null}", null],
    ["${{'k': inputs.ticket}}", { k: "T-9" }],
    ["${'}'}", "}"],
    ["${\"a}b\" + '}'}", "a}b}"],
    ["${r'\\'}", "\\"],
  ])("%j → %j", (template, expected) => {
    expect(render(template)).toEqual(expected);
  });
});

describe("embedded expressions interpolate text", () => {
  it.each<[JsonValue, JsonValue]>([
    ["ticket ${inputs.ticket}", "ticket T-9"],
    ["${inputs.ticket}!", "T-9!"],
    [" ${inputs.count}", " 2"],
    ["${inputs.count} of ${size(inputs.tags)}", "2 of 2"],
    [
      "tags=${inputs.tags} meta=${inputs.meta} none=${null} yes=${true}",
      'tags=["x","y"] meta={"a":1} none=null yes=true',
    ],
    ["cost: $${not an expression}", "cost: ${not an expression}"],
    ["$${inputs.ticket} is ${inputs.ticket}", "${inputs.ticket} is T-9"],
    ["plain $ and } and {", "plain $ and } and {"],
  ])("%j → %j", (template, expected) => {
    expect(render(template)).toEqual(expected);
  });
});

describe("structures", () => {
  it("evaluates strings anywhere in objects and lists; keys stay as written", () => {
    expect(
      render({ id: "${inputs.ticket}", "${key}": ["${inputs.count}", { n: "${inputs.count + 1}" }, 5, null, false] }),
    ).toEqual({
      id: "T-9",
      "${key}": [2, { n: 3 }, 5, null, false],
    });
  });

  it("knows a constant template, and unescapes it once", () => {
    const template = compileTemplate({ a: ["$${x}", 1] }, "/output");
    expect(template.isConstant).toBe(true);
    expect(template.evaluate(bindings)).toEqual({ a: ["${x}", 1] });
    expect(JSON.stringify(template)).toBe('{"a":["$${x}",1]}');
  });

  it("lists its expressions in document order with their pointers", () => {
    const template = compileTemplate(
      { b: "${inputs.count}", a: ["x ${inputs.ticket} ${thread.id}"] },
      { pointer: "/steps/3/yield/value", step: "y" },
    );
    expect(
      template.expressions.map((expression) => [expression.source, expression.site.pointer, expression.site.step]),
    ).toEqual([
      ["inputs.count", "/steps/3/yield/value/b", "y"],
      ["inputs.ticket", "/steps/3/yield/value/a/0", "y"],
      ["thread.id", "/steps/3/yield/value/a/0", "y"],
    ]);
  });

  it("escapes pointer tokens", () => {
    const template = compileTemplate({ "a/b~c": "${inputs.count}" }, "/output");
    expect(template.expressions[0]?.site.pointer).toBe("/output/a~1b~0c");
  });
});

describe("errors", () => {
  it("reports every syntax error of a template, each at its string", () => {
    let error: unknown;
    try {
      compileTemplate({ a: "${1 +}", b: ["ok", "x ${sise(y)} ${z"] }, "/steps/2/execute/input");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TemplateSyntaxError);
    expect((error as TemplateSyntaxError).errors.map((each) => [each.pointer, each.detail])).toEqual([
      ["/steps/2/execute/input/a", 'expression "1 +": syntax error at column 3: found + but expecting end of input'],
      ["/steps/2/execute/input/b/1", 'expression "sise(y)": unknown function "sise"'],
      ["/steps/2/execute/input/b/1", 'expression "z": "${" at position 14 has no closing "}"'],
    ]);
  });

  it("names the step, field and expression that failed to evaluate", () => {
    let error: unknown;
    try {
      render({ deep: ["ok", "${inputs.count + 0.5}"] });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ExpressionEvaluationError);
    expect((error as Error).message).toBe(
      `step "call" at /steps/0/execute/input/deep/1: expression "inputs.count + 0.5" failed: found no matching overload for '_+_' applied to '(int, double)'`,
    );
  });
});

describe("wholeExpression", () => {
  it.each<[string, string | undefined]>([
    ["${a}", "a"],
    ["${ {'x': 1}.x }", " {'x': 1}.x "],
    ["${a} ${b}", undefined],
    ["x${a}", undefined],
    ["a", undefined],
  ])("%j → %j", (text, expected) => {
    expect(wholeExpression(text)).toBe(expected);
  });
});
