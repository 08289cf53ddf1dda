import { readFileSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { JsonValue } from "./cel-json.js";
import { MAX_SOURCE_BYTES, parseScript } from "./parse-script.js";
import type { ScriptProblem } from "./script-validation-error.js";
import { ScriptValidationError } from "./script-validation-error.js";

/** A source from lines, so that line numbers in expectations are easy to count. */
const lines = (...text: string[]) => `${text.join("\n")}\n`;

/** The parsed document as plain JSON (expressions and templates print as written). */
function model(source: string): JsonValue {
  return JSON.parse(JSON.stringify(parseScript(source))) as JsonValue;
}

function problems(source: string): ScriptProblem[] {
  try {
    parseScript(source);
  } catch (error) {
    if (error instanceof ScriptValidationError) return [...error.problems];
    throw error;
  }
  throw new Error("the script parsed without problems");
}

const BASE = {
  dsl: "script/1",
  description: "",
  inputs: { type: "object" },
  outputs: { type: "object" },
  defaults: {},
};
const step = (fields: Record<string, JsonValue>) => ({ name: fields.id as string, continueOnError: false, ...fields });

describe("valid documents parse to the model", () => {
  it.each<[string, string, JsonValue]>([
    [
      "the smallest script",
      lines("dsl: script/1", "steps:", "  - {id: a, yield: {value: 1}}"),
      { ...BASE, steps: [step({ id: "a", primitive: "yield", yield: { value: 1 } })] },
    ],
    [
      "every common key",
      lines(
        "dsl: script/1",
        "steps:",
        "  - id: call",
        "    name: Call the API",
        "    when: true",
        "    timeout: 1m30s",
        "    retry: {maxAttempts: 5, backoff: fixed, initial: 2s}",
        "    continueOnError: true",
        "    execute: {tool: http.get}",
      ),
      {
        ...BASE,
        steps: [
          {
            id: "call",
            name: "Call the API",
            when: "true",
            timeout: 90_000,
            retry: { maxAttempts: 5, backoff: "fixed", initialMs: 2000, maxMs: 2000 },
            continueOnError: true,
            primitive: "execute",
            execute: { tool: "http.get", input: {} },
          },
        ],
      },
    ],
    [
      "a rule decide with a default and an empty branch",
      lines(
        "dsl: script/1",
        "steps:",
        "  - id: d",
        "    decide:",
        "      branches:",
        '        - {name: big, when: "${inputs.n > 10}", steps: [{id: x, yield: {value: big}}]}',
        "        - {name: other, default: true}",
      ),
      {
        ...BASE,
        steps: [
          step({
            id: "d",
            primitive: "decide",
            decide: {
              strategy: "rule",
              branches: [
                {
                  name: "big",
                  when: "inputs.n > 10",
                  default: false,
                  steps: [step({ id: "x", primitive: "yield", yield: { value: "big" } })],
                },
                { name: "other", default: true, steps: [] },
              ],
            },
          }),
        ],
      },
    ],
    [
      "an llm decide",
      lines(
        "dsl: script/1",
        "steps:",
        "  - id: d",
        "    timeout: 20s",
        "    decide:",
        "      strategy: llm",
        "      model: small",
        '      prompt: "Urgent? ${inputs.text}"',
        "      branches:",
        "        - {name: yes, description: It is urgent., steps: [{id: y, yield: {value: 1}}]}",
        "        - {name: no, default: true}",
      ),
      {
        ...BASE,
        steps: [
          step({
            id: "d",
            timeout: 20_000,
            primitive: "decide",
            decide: {
              strategy: "llm",
              prompt: "Urgent? ${inputs.text}",
              model: "small",
              branches: [
                {
                  name: "yes",
                  description: "It is urgent.",
                  default: false,
                  steps: [step({ id: "y", primitive: "yield", yield: { value: 1 } })],
                },
                { name: "no", default: true, steps: [] },
              ],
            },
          }),
        ],
      },
    ],
    [
      "iterate, parallel, set and fail",
      lines(
        "dsl: script/1",
        "steps:",
        "  - id: loop",
        "    iterate:",
        "      over: inputs.rows",
        "      as: row",
        "      maxConcurrency: 8",
        '      steps: [{id: keep, set: {values: {last: "${row}", at: "${index}"}}}]',
        "  - id: both",
        "    parallel:",
        "      failFast: false",
        "      branches:",
        "        - {name: left, steps: [{id: l, yield: {value: L}}]}",
        "        - {name: right, steps: [{id: r, yield: {value: R}}]}",
        "  - id: stop",
        "    when: \"steps.both.output.left != 'L'\"",
        '    fail: {message: "unexpected ${steps.both.output}"}',
      ),
      {
        ...BASE,
        steps: [
          step({
            id: "loop",
            primitive: "iterate",
            iterate: {
              over: "inputs.rows",
              as: "row",
              maxConcurrency: 8,
              steps: [step({ id: "keep", primitive: "set", set: { values: { last: "${row}", at: "${index}" } } })],
            },
          }),
          step({
            id: "both",
            primitive: "parallel",
            parallel: {
              branches: [
                { name: "left", steps: [step({ id: "l", primitive: "yield", yield: { value: "L" } })] },
                { name: "right", steps: [step({ id: "r", primitive: "yield", yield: { value: "R" } })] },
              ],
              failFast: false,
            },
          }),
          step({
            id: "stop",
            when: "steps.both.output.left != 'L'",
            primitive: "fail",
            fail: { message: "unexpected ${steps.both.output}" },
          }),
        ],
      },
    ],
    [
      "waits and approvals",
      lines(
        "dsl: script/1",
        "steps:",
        "  - {id: w1, wait: {for: 10s}}",
        "  - {id: w2, wait: {until: '2030-01-02T03:04:05Z'}}",
        "  - {id: w3, wait: {until: 'timestamp(inputs.at)'}}",
        "  - {id: a1, approval: {}}",
        "  - {id: a2, approval: {prompt: 'OK ${inputs.x}?', timeout: 1d, onTimeout: continue}}",
      ),
      {
        ...BASE,
        steps: [
          step({ id: "w1", primitive: "wait", wait: { forMs: 10_000 } }),
          step({ id: "w2", primitive: "wait", wait: { untilMs: Date.UTC(2030, 0, 2, 3, 4, 5) } }),
          step({ id: "w3", primitive: "wait", wait: { until: "timestamp(inputs.at)" } }),
          step({ id: "a1", primitive: "approval", approval: { onTimeout: "fail" } }),
          step({
            id: "a2",
            primitive: "approval",
            approval: { prompt: "OK ${inputs.x}?", timeoutMs: 86_400_000, onTimeout: "continue" },
          }),
        ],
      },
    ],
    [
      "the document keys",
      lines(
        "dsl: script/1",
        "name: my-script.v2",
        "description: Does things.",
        "inputs: {type: object, properties: {n: {type: integer, default: 1}}}",
        "outputs: {$schema: 'http://json-schema.org/draft-07/schema#', type: object}",
        "defaults: {timeout: 2m, retry: {initial: 5s}}",
        "steps:",
        "  - {id: a, execute: {tool: t, input: '${ {\"n\": inputs.n} }'}}",
        "output: {n: '${steps.a.output.n}', constant: [1, two]}",
      ),
      {
        dsl: "script/1",
        name: "my-script.v2",
        description: "Does things.",
        inputs: { type: "object", properties: { n: { type: "integer", default: 1 } } },
        outputs: { $schema: "http://json-schema.org/draft-07/schema#", type: "object" },
        defaults: {
          timeout: 120_000,
          retry: { maxAttempts: 3, backoff: "exponential", initialMs: 5000, maxMs: 60_000 },
        },
        steps: [step({ id: "a", primitive: "execute", execute: { tool: "t", input: '${ {"n": inputs.n} }' } })],
        output: { n: "${steps.a.output.n}", constant: [1, "two"] },
      },
    ],
    [
      "anchors and aliases",
      lines(
        "dsl: script/1",
        "defaults: {retry: &patient {maxAttempts: 7, initial: 3s, max: 2m}}",
        "steps:",
        "  - {id: a, retry: *patient, execute: {tool: t}}",
      ),
      {
        ...BASE,
        defaults: { retry: { maxAttempts: 7, backoff: "exponential", initialMs: 3000, maxMs: 120_000 } },
        steps: [
          step({
            id: "a",
            retry: { maxAttempts: 7, backoff: "exponential", initialMs: 3000, maxMs: 120_000 },
            primitive: "execute",
            execute: { tool: "t", input: {} },
          }),
        ],
      },
    ],
  ])("%s", (_name, source, expected) => {
    expect(model(source)).toEqual(expected);
  });

  it("reads JSON into the same model as the equivalent YAML", () => {
    const yaml = lines(
      "dsl: script/1",
      "steps:",
      "  - id: a",
      "    execute: {tool: t, input: {x: '${inputs.x}'}}",
      "  - {id: b, yield: {value: '${steps.a.output}'}}",
    );
    const json = JSON.stringify(
      {
        dsl: "script/1",
        steps: [
          { id: "a", execute: { tool: "t", input: { x: "${inputs.x}" } } },
          { id: "b", yield: { value: "${steps.a.output}" } },
        ],
      },
      null,
      "\t",
    );
    expect(model(json)).toEqual(model(yaml));
  });
});

/** The code blocks of the doc marked `<!-- example: <name> -->`. */
function docExamples(markdown: string): Map<string, string> {
  const examples = new Map<string, string>();
  for (const match of markdown.matchAll(/<!-- example: ([a-z]+) -->\n```(?:yaml|json)\n([\s\S]*?)```/g))
    examples.set(match[1] as string, match[2] as string);
  return examples;
}

describe("the examples of docs/script-dsl.md", () => {
  const examples = docExamples(readFileSync(new URL("../../../../../docs/script-dsl.md", import.meta.url), "utf8"));

  it("are all there", () => {
    expect([...examples.keys()]).toEqual(["greet", "greetjson", "paths", "triage", "release", "export"]);
  });

  it.each(["greet", "greetjson", "paths", "triage", "release", "export"])("%s is valid", (name) => {
    expect(() => parseScript(examples.get(name) as string)).not.toThrow();
  });

  it("says the same thing in YAML and in JSON", () => {
    expect(model(examples.get("greetjson") as string)).toEqual({
      ...(model(examples.get("greet") as string) as object),
      description: "",
    });
  });
});

describe("limits and YAML", () => {
  it("refuses a source over 1 MiB before reading it", () => {
    const source = `dsl: script/1\n# ${"x".repeat(MAX_SOURCE_BYTES)}\n`;
    expect(problems(source)).toEqual([
      {
        path: "",
        line: 1,
        column: 1,
        message: `the source is ${MAX_SOURCE_BYTES + 17} bytes, more than the limit of 1 MiB (${MAX_SOURCE_BYTES})`,
      },
    ]);
  });

  it("turns the error into INVALID_ARGUMENT naming the request field", () => {
    let error: unknown;
    try {
      parseScript(lines("dsl: script/1", "steps: []"));
    } catch (caught) {
      error = caught;
    }
    const connect = (error as ScriptValidationError).toConnectError();
    expect(connect.code).toBe(Code.InvalidArgument);
    expect(connect.rawMessage).toBe("source: script is not valid: 2:8 /steps: must have at least 1 item");
  });

  it("stops an alias bomb at the node budget", () => {
    let source = "dsl: script/1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i < 8; i++)
      source += `a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(", ")}]\n`;
    const [problem] = problems(`${source}steps: [{id: s, yield: {value: *a7}}]\n`);
    expect(problem?.message).toBe("the document expands to more than 200000 nodes (through aliases?)");
  });

  it("refuses YAML that has no JSON form", () => {
    expect(
      problems(lines("dsl: script/1", "steps: [{id: a, yield: {value: !!binary aGk=}}]", "extra: !custom x")),
    ).toEqual([{ path: "", line: 3, column: 8, message: "YAML: Unresolved tag: !custom" }]);
    expect(problems(lines("dsl: script/1", "steps: [{id: a, yield: {value: !!binary aGk=}}]"))).toEqual([
      { path: "/steps/0/yield/value", line: 2, column: 41, message: "a !!binary value has no JSON form; use a string" },
    ]);
  });

  it("lists every problem, in source order", () => {
    const source = lines(
      "dsl: script/1",
      "steps:",
      "  - id: fetch",
      "    exectue: {tool: x}",
      "  - id: Fetch2",
      "    execute: {tool: y, input: {a: '${inputs.x +}'}}",
      "  - id: loop",
      "    iterate: {over: steps.fetch.output, maxConcurrency: 100, steps: [{id: z, yield: {value: '${item}'}}]}",
      "  - id: w",
      "    wait: {for: 30}",
    );
    let error: unknown;
    try {
      parseScript(source);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toBe(
      [
        "script is not valid (5 problems):",
        '  4:5 /steps/0/exectue: unknown key "exectue" (did you mean "execute"?)',
        '  5:9 /steps/1/id: id "Fetch2" must be 1 to 64 lowercase letters, digits or "_", starting with a letter',
        '  6:35 /steps/1/execute/input/a: expression "inputs.x +": syntax error at column 10: found + but expecting end of input',
        "  8:57 /steps/2/iterate/maxConcurrency: must be between 1 and 64, not 100",
        '  10:17 /steps/3/wait/for: must be a duration string such as "30s"; a bare number has no unit',
      ].join("\n"),
    );
  });
});
