import { describe, expect, it } from "vitest";
import type { JsonValue } from "./cel-json.js";
import { parseScript } from "./parse-script.js";
import type { ScriptProblem } from "./script-validation-error.js";
import { ScriptValidationError } from "./script-validation-error.js";

/**
 * Invalid documents: each case asserts every problem parseScript reports, with its exact JSON
 * Pointer, line, column and message.
 */

/** A source from lines, so that line numbers in expectations are easy to count. */
const lines = (...text: string[]) => `${text.join("\n")}\n`;

function problems(source: string): ScriptProblem[] {
  try {
    parseScript(source);
  } catch (error) {
    if (error instanceof ScriptValidationError) return [...error.problems];
    throw error;
  }
  throw new Error("the script parsed without problems");
}

/** One problem: [path, line, column, message]. */
type Expected = [string, number, number, string];

const head = ["dsl: script/1", "steps:"];

describe("invalid documents: every problem names its path, line and column", () => {
  it.each<[string, string, Expected[]]>([
    [
      "YAML syntax",
      lines("dsl: script/1", "steps: [", "  {id: a"),
      [
        ["", 4, 1, "YAML: Flow map in block collection must be sufficiently indented and end with a }"],
        ["", 4, 1, "YAML: Flow sequence in block collection must be sufficiently indented and end with a ]"],
      ],
    ],
    [
      "a duplicate key",
      lines("dsl: script/1", "dsl: script/1", "steps: []"),
      [["", 2, 1, "YAML: Map keys must be unique"]],
    ],
    ["an empty document", "# nothing\n", [["", 1, 1, "the document is empty"]]],
    ["a list at the top", lines("- dsl: script/1"), [["", 1, 1, "must be an object, not a list"]]],
    [
      "a value JSON cannot hold",
      lines(...head, "  - {id: a, yield: {value: .nan}}"),
      [["/steps/0/yield/value", 3, 28, "NaN is not a JSON number"]],
    ],
    [
      "a key that is not a string",
      lines(...head, "  - {id: a, execute: {tool: t, input: {1: one}}}"),
      [["/steps/0/execute/input", 3, 40, 'map keys must be strings; quote the key "1"']],
    ],
    ["no dsl", lines("steps:", "  - {id: a, yield: {value: 1}}"), [["/dsl", 1, 1, "is required"]]],
    [
      "another dsl version",
      lines("dsl: script/2", "stages: []"),
      [["/dsl", 1, 6, 'unsupported version "script/2"; this server reads "script/1"']],
    ],
    [
      "an unknown top-level key",
      lines(...head, "  - {id: a, yield: {value: 1}}", "outptu: {}"),
      [["/outptu", 4, 1, 'unknown key "outptu" (did you mean "output"?)']],
    ],
    ["no steps", lines("dsl: script/1", "name: x"), [["/steps", 1, 1, "is required"]]],
    [
      "a bad script name",
      lines("dsl: script/1", "name: my script", "steps: [{id: a, yield: {value: 1}}]"),
      [["/name", 2, 7, 'must be 1 to 128 letters, digits, "-", "_" or "."']],
    ],
    [
      "a step without a primitive",
      lines(...head, "  - id: a", "    name: A"),
      [
        [
          "/steps/0",
          3,
          5,
          "a step needs one primitive: execute, decide, iterate, parallel, yield, wait, approval, set, fail",
        ],
      ],
    ],
    [
      "a step with two primitives",
      lines(...head, "  - id: a", "    yield: {value: 1}", "    wait: {for: 1s}"),
      [["/steps/0/wait", 5, 5, 'a step has exactly one primitive; this one already has "yield"']],
    ],
    [
      "a misspelt primitive",
      lines(...head, "  - id: a", "    exectue: {tool: t}"),
      [["/steps/0/exectue", 4, 5, 'unknown key "exectue" (did you mean "execute"?)']],
    ],
    [
      "a snake_case key",
      lines(...head, "  - id: a", "    continue_on_error: true", "    execute: {tool: t}"),
      [["/steps/0/continue_on_error", 4, 5, 'unknown key "continue_on_error" (did you mean "continueOnError"?)']],
    ],
    ["a missing id", lines(...head, "  - yield: {value: 1}"), [["/steps/0/id", 3, 5, "is required"]]],
    [
      "a step name holding NUL",
      lines(...head, '  - {id: a, name: "x\\0y", yield: {value: 1}}'),
      [["/steps/0/name", 3, 19, "must not contain the NUL character (U+0000)"]],
    ],
    [
      "an id that is a CEL literal",
      lines(...head, "  - {id: 'null', yield: {value: 1}}"),
      [["/steps/0/id", 3, 10, 'id "null" is a reserved word of the expression language']],
    ],
    [
      "a duplicate id in a nested list",
      lines(
        ...head,
        "  - {id: a, yield: {value: 1}}",
        "  - id: b",
        "    parallel:",
        "      branches:",
        "        - {name: x, steps: [{id: a, yield: {value: 2}}]}",
      ),
      [["/steps/1/parallel/branches/0/steps/0/id", 7, 34, 'id "a" is already used by the step at /steps/0']],
    ],
    [
      "a missing tool",
      lines(...head, "  - {id: a, execute: {input: {}}}"),
      [["/steps/0/execute/tool", 3, 22, "is required"]],
    ],
    [
      "an input that is not an object",
      lines(...head, "  - {id: a, execute: {tool: t, input: 42}}"),
      [["/steps/0/execute/input", 3, 39, 'must be an object, or a "${…}" expression giving one']],
    ],
    [
      "a bad expression in a template",
      lines(...head, "  - {id: a, yield: {value: {x: ['${1 +}']}}}"),
      [
        [
          "/steps/0/yield/value/x/0",
          3,
          33,
          'expression "1 +": syntax error at column 3: found + but expecting end of input',
        ],
      ],
    ],
    [
      "an unknown function",
      lines(...head, "  - {id: a, when: 'sise(inputs.x) > 0', yield: {value: 1}}"),
      [["/steps/0/when", 3, 19, 'expression "sise(inputs.x) > 0": unknown function "sise"']],
    ],
    [
      "an unclosed ${",
      lines(...head, "  - {id: a, fail: {message: 'bad ${inputs.x'}}"),
      [["/steps/0/fail/message", 3, 29, 'expression "inputs.x": "${" at position 5 has no closing "}"']],
    ],
    [
      "a when that is a number",
      lines(...head, "  - {id: a, when: 1, yield: {value: 1}}"),
      [["/steps/0/when", 3, 19, "must be a CEL expression (a string), not a number"]],
    ],
    [
      "a timeout without a unit",
      lines(...head, "  - {id: a, timeout: 30, execute: {tool: t}}"),
      [["/steps/0/timeout", 3, 22, 'must be a duration string such as "30s"; a bare number has no unit']],
    ],
    [
      "a zero timeout",
      lines(...head, "  - {id: a, timeout: 0s, execute: {tool: t}}"),
      [["/steps/0/timeout", 3, 22, "must be longer than zero"]],
    ],
    [
      "a timeout on a wait step",
      lines(...head, "  - {id: a, timeout: 1m, wait: {for: 5m}}"),
      [["/steps/0/timeout", 3, 13, "timeout does not apply to wait steps"]],
    ],
    [
      "a timeout on an approval step",
      lines(...head, "  - {id: a, timeout: 1m, approval: {}}"),
      [["/steps/0/timeout", 3, 13, "timeout does not apply to approval steps; use approval.timeout"]],
    ],
    [
      "a retry on a yield step",
      lines(...head, "  - {id: a, retry: {maxAttempts: 2}, yield: {value: 1}}"),
      [["/steps/0/retry", 3, 13, 'retry applies only to execute steps and decide steps with strategy "llm"']],
    ],
    [
      "too many attempts",
      lines("dsl: script/1", "defaults: {retry: {maxAttempts: 11}}", "steps: [{id: a, yield: {value: 1}}]"),
      [["/defaults/retry/maxAttempts", 2, 33, "must be between 1 and 10, not 11"]],
    ],
    [
      "a retry max shorter than initial",
      lines(...head, "  - {id: a, retry: {initial: 10s, max: 5s}, execute: {tool: t}}"),
      [["/steps/0/retry/max", 3, 40, "must not be shorter than initial"]],
    ],
    [
      "a retry max with fixed backoff",
      lines(...head, "  - {id: a, retry: {backoff: fixed, max: 5s}, execute: {tool: t}}"),
      [["/steps/0/retry/max", 3, 37, 'max applies only to backoff "exponential"']],
    ],
    [
      "a misspelt backoff",
      lines(...head, "  - {id: a, retry: {backoff: exponentail}, execute: {tool: t}}"),
      [
        [
          "/steps/0/retry/backoff",
          3,
          30,
          'must be one of "fixed", "exponential", not "exponentail" (did you mean "exponential"?)',
        ],
      ],
    ],
    [
      "a retry delay over an hour",
      lines(...head, "  - {id: a, retry: {initial: 2h}, execute: {tool: t}}"),
      [["/steps/0/retry/initial", 3, 30, "must be at most 1h"]],
    ],
    [
      "a fail step that continues on error",
      lines(...head, "  - {id: a, continueOnError: true, fail: {message: x}}"),
      [["/steps/0/continueOnError", 3, 13, "a fail step with continueOnError would never fail"]],
    ],
    [
      "iterate concurrency over 64",
      lines(...head, "  - {id: a, iterate: {over: '[1]', maxConcurrency: 65, steps: [{id: b, yield: {value: 1}}]}}"),
      [["/steps/0/iterate/maxConcurrency", 3, 52, "must be between 1 and 64, not 65"]],
    ],
    [
      "iterate without over",
      lines(...head, "  - {id: a, iterate: {steps: [{id: b, yield: {value: 1}}]}}"),
      [["/steps/0/iterate/over", 3, 22, "is required"]],
    ],
    [
      "iterate with an empty body",
      lines(...head, "  - {id: a, iterate: {over: '[1]', steps: []}}"),
      [["/steps/0/iterate/steps", 3, 43, "must have at least 1 item"]],
    ],
    [
      "an as that hides a binding",
      lines(...head, "  - {id: a, iterate: {over: '[1]', as: index, steps: [{id: b, yield: {value: 1}}]}}"),
      [["/steps/0/iterate/as", 3, 40, 'as "index" would hide a name expressions already use; choose another']],
    ],
    [
      "an as that is a CEL keyword",
      lines(...head, "  - {id: a, iterate: {over: '[1]', as: for, steps: [{id: b, yield: {value: 1}}]}}"),
      [["/steps/0/iterate/as", 3, 40, 'as "for" is a reserved word of the expression language']],
    ],
    [
      "nested loops with the same as",
      lines(
        ...head,
        "  - id: outer",
        "    iterate:",
        "      over: '[[1]]'",
        "      steps:",
        "        - {id: inner, iterate: {over: item, steps: [{id: b, yield: {value: 1}}]}}",
      ),
      [
        [
          "/steps/0/iterate/steps/0/iterate/as",
          7,
          32,
          'as is "item" by default, which is already the item of an enclosing iterate step; choose another name',
        ],
      ],
    ],
    [
      "a decide without branches",
      lines(...head, "  - {id: a, decide: {branches: []}}"),
      [["/steps/0/decide/branches", 3, 32, "must have at least 1 item"]],
    ],
    [
      "two default branches",
      lines(
        ...head,
        "  - id: a",
        "    decide:",
        "      branches:",
        "        - {name: x, default: true}",
        "        - {name: y, default: true}",
      ),
      [["/steps/0/decide/branches/1/default", 7, 30, "a decide step has at most one default branch"]],
    ],
    [
      "a rule branch without when",
      lines(
        ...head,
        "  - id: a",
        "    decide:",
        "      branches:",
        "        - {name: x, steps: [{id: b, yield: {value: 1}}]}",
      ),
      [["/steps/0/decide/branches/0/when", 6, 11, "is required in a rule branch that is not the default"]],
    ],
    [
      "a when on the default branch",
      lines(...head, "  - id: a", "    decide:", "      branches:", "        - {name: x, default: true, when: 'true'}"),
      [
        [
          "/steps/0/decide/branches/0/when",
          6,
          36,
          "a default branch has no condition: it is taken when no other branch matches",
        ],
      ],
    ],
    [
      "an llm decide without a prompt",
      lines(...head, "  - id: a", "    decide:", "      strategy: llm", "      branches: [{name: x}]"),
      [["/steps/0/decide/prompt", 5, 7, 'is required with strategy "llm"']],
    ],
    [
      "a when in an llm branch",
      lines(
        ...head,
        "  - id: a",
        "    decide:",
        "      strategy: llm",
        "      prompt: Which?",
        "      branches: [{name: x, when: 'true'}]",
      ),
      [
        [
          "/steps/0/decide/branches/0/when",
          7,
          28,
          'when is a condition of strategy "rule"; with strategy "llm" describe the branch in description',
        ],
      ],
    ],
    [
      "a prompt in a rule decide",
      lines(...head, "  - id: a", "    decide:", "      prompt: Which?", "      branches: [{name: x, default: true}]"),
      [["/steps/0/decide/prompt", 5, 7, 'prompt is used only by strategy "llm"']],
    ],
    [
      "a misspelt strategy",
      lines(...head, "  - {id: a, decide: {strategy: rules, branches: [{name: x, default: true}]}}"),
      [["/steps/0/decide/strategy", 3, 32, 'must be one of "rule", "llm", not "rules" (did you mean "rule"?)']],
    ],
    [
      "the same branch name twice",
      lines(
        ...head,
        "  - id: a",
        "    parallel:",
        "      branches:",
        "        - {name: x, steps: [{id: b, yield: {value: 1}}]}",
        "        - {name: x, steps: [{id: c, yield: {value: 1}}]}",
      ),
      [["/steps/0/parallel/branches/1/name", 7, 18, 'branch name "x" is used twice in this step']],
    ],
    [
      "a wait with for and until",
      lines(...head, "  - {id: a, wait: {for: 1s, until: '2030-01-01T00:00:00Z'}}"),
      [["/steps/0/wait/until", 3, 36, 'give either "for" or "until", not both']],
    ],
    [
      "a wait with neither",
      lines(...head, "  - {id: a, wait: {}}"),
      [["/steps/0/wait", 3, 19, 'needs "for" (a duration) or "until" (a time)']],
    ],
    [
      "onTimeout without timeout",
      lines(...head, "  - {id: a, approval: {onTimeout: continue}}"),
      [["/steps/0/approval/onTimeout", 3, 24, "onTimeout needs a timeout"]],
    ],
    [
      "a bad variable name",
      lines(...head, "  - {id: a, set: {values: {Total: 1}}}"),
      [
        [
          "/steps/0/set/values/Total",
          3,
          28,
          'variable name "Total" must be 1 to 64 lowercase letters, digits or "_", starting with a letter',
        ],
      ],
    ],
    [
      "inputs that are not an object schema",
      lines("dsl: script/1", "inputs: {type: array}", "steps: [{id: a, yield: {value: 1}}]"),
      [["/inputs/type", 2, 16, `must be "object", not "array": a script's inputs are named values`]],
    ],
    [
      "an invalid schema type",
      lines(
        "dsl: script/1",
        "inputs: {type: object, properties: {n: {type: strin}}}",
        "steps: [{id: a, yield: {value: 1}}]",
      ),
      [
        [
          "/inputs/properties/n/type",
          2,
          47,
          'not valid JSON Schema: must be one of "array", "boolean", "integer", "null", "number", "object", "string"',
        ],
      ],
    ],
    [
      "a schema keyword typo",
      lines("dsl: script/1", "outputs: {type: object, requird: [x]}", "steps: [{id: a, yield: {value: 1}}]"),
      [["/outputs/requird", 2, 25, 'not valid JSON Schema: unknown keyword "requird"']],
    ],
  ])("%s", (_name, source, expected) => {
    expect(problems(source)).toEqual(
      expected.map(([path, line, column, message]) => ({ path, line, column, message })),
    );
  });
});

describe("nesting", () => {
  /** 17 iterate steps, each in the body of the one before. */
  function nested(levels: number): string {
    let steps: JsonValue = [{ id: "leaf", yield: { value: 1 } }];
    for (let depth = levels - 1; depth >= 0; depth--)
      steps = [{ id: `l${depth}`, iterate: { over: "[1]", as: `i${depth}`, steps } }];
    return JSON.stringify({ dsl: "script/1", steps });
  }

  it("allows 16 levels of container steps", () => {
    expect(() => parseScript(nested(16))).not.toThrow();
  });

  it("refuses a 17th", () => {
    const source = nested(17);
    const path = `/steps/0${"/iterate/steps/0".repeat(16)}/iterate/steps`;
    expect(problems(source)).toEqual([
      {
        path,
        line: 1,
        column: source.indexOf('[{"id":"leaf"') + 1,
        message: "steps are nested more than 16 levels deep",
      },
    ]);
  });
});

describe("invalid references: checked once the structure is valid", () => {
  it.each<[string, string, Expected[]]>([
    [
      "an unknown step, with a suggestion",
      lines(...head, "  - {id: fetch, execute: {tool: t}}", "  - {id: b, yield: {value: '${steps.fecth.output}'}}"),
      [
        [
          "/steps/1/yield/value",
          4,
          28,
          'expression "steps.fecth.output": no step "fecth" in this script (did you mean "fetch"?)',
        ],
      ],
    ],
    [
      "a later step",
      lines(...head, "  - {id: a, yield: {value: '${steps.b.output}'}}", "  - {id: b, yield: {value: 1}}"),
      [["/steps/0/yield/value", 3, 28, 'expression "steps.b.output": step "b" runs after this one']],
    ],
    [
      "the step itself",
      lines(...head, "  - {id: a, when: 'steps.a.status == \"ok\"', yield: {value: 1}}"),
      [
        [
          "/steps/0/when",
          3,
          19,
          `expression "steps.a.status == \\"ok\\"": step "a" cannot use its own output; it has not finished`,
        ],
      ],
    ],
    [
      "an enclosing step",
      lines(
        ...head,
        "  - id: loop",
        "    iterate:",
        "      over: '[1, 2]'",
        "      steps: [{id: b, yield: {value: '${size(steps.loop.output)}'}}]",
      ),
      [
        [
          "/steps/0/iterate/steps/0/yield/value",
          6,
          38,
          'expression "size(steps.loop.output)": step "loop" encloses this expression; its output exists only when it has finished',
        ],
      ],
    ],
    [
      "a step in another decide branch",
      lines(
        ...head,
        "  - id: d",
        "    decide:",
        "      branches:",
        "        - {name: x, when: 'true', steps: [{id: bx, yield: {value: 1}}]}",
        "        - {name: y, default: true, steps: [{id: by, yield: {value: '${steps.bx.output}'}}]}",
      ),
      [
        [
          "/steps/0/decide/branches/1/steps/0/yield/value",
          7,
          68,
          'expression "steps.bx.output": step "bx" is in another branch of decide step "d"; only one branch runs',
        ],
      ],
    ],
    [
      "a step in another parallel branch",
      lines(
        ...head,
        "  - id: p",
        "    parallel:",
        "      branches:",
        "        - {name: x, steps: [{id: bx, yield: {value: 1}}]}",
        "        - {name: y, steps: [{id: by, yield: {value: '${steps.bx.output}'}}]}",
      ),
      [
        [
          "/steps/0/parallel/branches/1/steps/0/yield/value",
          7,
          53,
          'expression "steps.bx.output": step "bx" runs in another branch of parallel step "p", at the same time as this one',
        ],
      ],
    ],
    [
      "a step inside a loop, from outside",
      lines(
        ...head,
        "  - {id: loop, iterate: {over: '[1]', steps: [{id: inner, yield: {value: 1}}]}}",
        "  - {id: after, yield: {value: '${steps.inner.output}'}}",
      ),
      [
        [
          "/steps/1/yield/value",
          4,
          32,
          'expression "steps.inner.output": step "inner" runs inside iterate step "loop", once per item; use steps.loop.output',
        ],
      ],
    ],
    [
      "an unknown name",
      lines(...head, "  - {id: a, yield: {value: '${input.x}'}}"),
      [["/steps/0/yield/value", 3, 28, 'expression "input.x": unknown name "input" (did you mean "inputs"?)']],
    ],
    [
      "item outside a loop",
      lines(...head, "  - {id: a, yield: {value: '${item}'}}"),
      [
        [
          "/steps/0/yield/value",
          3,
          28,
          'expression "item": unknown name "item"; "item" is bound only inside iterate steps',
        ],
      ],
    ],
    [
      "a variable nobody sets",
      lines(...head, "  - {id: s, set: {values: {total: 1}}}", "  - {id: a, yield: {value: '${vars.totl}'}}"),
      [
        [
          "/steps/1/yield/value",
          4,
          28,
          'expression "vars.totl": no set step binds vars.totl (did you mean "vars.total"?)',
        ],
      ],
    ],
    [
      "two parallel branches setting one variable",
      lines(
        ...head,
        "  - id: p",
        "    parallel:",
        "      branches:",
        "        - {name: x, steps: [{id: sx, set: {values: {n: 1}}}]}",
        "        - {name: y, steps: [{id: sy, set: {values: {n: 2}}}]}",
      ),
      [
        [
          "/steps/0/parallel/branches/1/steps/0/set/values/n",
          7,
          56,
          'vars.n is also set in branch "x" of this parallel step; branches run at the same time',
        ],
      ],
    ],
    [
      "the output reading a loop's inner step",
      lines(
        ...head,
        "  - {id: loop, iterate: {over: '[1]', steps: [{id: inner, yield: {value: 1}}]}}",
        "output: {x: '${steps.inner.output}'}",
      ),
      [
        [
          "/output/x",
          4,
          13,
          'expression "steps.inner.output": step "inner" runs inside iterate step "loop", once per item; use steps.loop.output',
        ],
      ],
    ],
  ])("%s", (_name, source, expected) => {
    expect(problems(source)).toEqual(
      expected.map(([path, line, column, message]) => ({ path, line, column, message })),
    );
  });

  it("accepts what is in scope: earlier steps, branch steps after their decide, the loop's own item and steps", () => {
    const source = lines(
      ...head,
      "  - {id: a, execute: {tool: t}}",
      "  - id: d",
      "    decide:",
      "      branches:",
      "        - {name: x, when: 'steps.a.output.ok', steps: [{id: dx, yield: {value: '${steps.a.output}'}}]}",
      "  - id: loop",
      "    iterate:",
      "      over: steps.a.output.rows",
      "      as: row",
      "      steps:",
      "        - {id: first, execute: {tool: t, input: {row: '${row}', at: '${index}', a: '${steps.a.output}'}}}",
      "        - {id: second, set: {values: {seen: '${steps.first.output}'}}}",
      "        - {id: third, yield: {value: '${vars.seen}'}}",
      "  - {id: after, yield: {value: '${has(steps.dx) ? steps.dx.output : steps.loop.output}'}}",
      "output: {all: '${steps[thread.metadata.pick].output}'}",
    );
    expect(() => parseScript(source)).not.toThrow();
  });
});
