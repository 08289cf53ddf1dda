// What bounding a script's expressions costs (server/src/services/script/dsl/cost-meter.ts), in
// one run:
// 1. typical expressions and a template, evaluated as the engine does (bindings converted,
//    evaluated, converted back): bounded, against the unbounded evaluation the engine had before
//    (plain environment, bindings converted in full, no meter) and against the same lazy
//    conversion without instrumentation or meter (what the bound itself costs);
// 2. how long a cost unit takes on heavy expressions: what the cost limit amounts to in time;
// 3. the other route, evaluation off the event loop in a worker thread as json.transform does
//    (tools/cel-worker-pool.ts), for the same typical expression with step outputs of two sizes.
// Run: npx tsx bench/expression-cost.bench.ts
import { celEnv, celMap, isCelError, parse, plan } from "@bufbuild/cel";
import type { CelInput, CelResult } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { celToJson, type JsonValue } from "../server/src/services/script/dsl/cel-json.js";
import { DEFAULT_EXPRESSION_LIMITS } from "../server/src/services/script/dsl/cost-meter.js";
import {
  BindingScope,
  compileExpression,
  type ExpressionBindings,
} from "../server/src/services/script/dsl/expressions.js";
import { compileTemplate } from "../server/src/services/script/dsl/templates.js";
import { createCelWorkerPool } from "../server/src/services/script/tools/cel-worker-pool.js";
import { formatNs, measure, measureAsync } from "./measure.js";

const comments = Array.from({ length: 10 }, (_, i) => ({
  author: i % 3 === 0 ? "bot" : `user${i}`,
  text: `comment ${i}`,
}));
const bindings: ExpressionBindings = {
  inputs: { ticket_id: "T-1042", email: "Ada@Example.com", tags: ["billing", "urgent"], priority: "P1" },
  steps: {
    fetch: { output: { id: "T-1042", priority: "P1", subject: "Refund", comments }, status: "completed", error: null },
  },
  env: {},
  thread: { id: "th_1", metadata: { team: "support" } },
  vars: {},
};

/** The evaluation before the bound: the whole of each binding converted, then a plain program. */
const plainEnv = celEnv({ funcs: strings });
function eagerCel(value: JsonValue): CelInput {
  if (value === null || typeof value !== "object")
    return typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(eagerCel);
  return celMap(new Map(Object.entries(value).map(([key, item]) => [key, eagerCel(item)])));
}
function unbounded(source: string): (b: ExpressionBindings) => JsonValue {
  const program = plan(plainEnv, parse(source)) as (bindings: Record<string, CelInput>) => CelResult;
  return (b) => {
    const result = program({
      inputs: eagerCel(b.inputs),
      steps: eagerCel(b.steps as unknown as JsonValue),
      thread: eagerCel(b.thread as unknown as JsonValue),
    });
    if (isCelError(result)) throw new Error(result.message);
    return celToJson(result);
  };
}

const typical = [
  "steps.fetch.output.priority == 'P1'",
  "inputs.email.lowerAscii().endsWith('@example.com')",
  "size(steps.fetch.output.comments) > 0 && thread.metadata.team == 'support'",
  "steps.fetch.output.comments.filter(c, c.author != 'bot').map(c, c.text)",
  "inputs.priority in ['P0', 'P1'] ? 'page' : 'queue'",
];

/** The same expression with today's lazy conversion but no instrumentation and no meter: the bound's own cost. */
function unmetered(source: string): (b: ExpressionBindings) => JsonValue {
  const references = compileExpression(source, "/bench").references;
  const program = plan(plainEnv, parse(source)) as (bindings: Record<string, CelInput>) => CelResult;
  return (b) => {
    const result = program(new BindingScope(b).celBindings(references));
    if (isCelError(result)) throw new Error(result.message);
    return celToJson(result);
  };
}

console.log("## 1. Typical expressions, per evaluation (bindings converted, result converted back)\n");
console.log(
  "| Expression | before (full conversion, no bound) | lazy conversion, no bound | bounded | bound's overhead | units |",
);
console.log("|---|---|---|---|---|---|");
for (const source of typical) {
  const [before, plain] = [unbounded(source), unmetered(source)];
  const bounded = compileExpression(source, "/bench");
  const scope = new BindingScope(bindings);
  bounded.evaluate(scope);
  const a = measure("before", () => before(bindings), { batch: 2_000, rounds: 21 });
  const b = measure("unmetered", () => plain(bindings), { batch: 2_000, rounds: 21 });
  const c = measure("bounded", () => bounded.evaluate(bindings), { batch: 2_000, rounds: 21 });
  console.log(
    `| \`${source}\` | ${formatNs(a.nsPerOp)} | ${formatNs(b.nsPerOp)} | ${formatNs(c.nsPerOp)} | ${((c.nsPerOp / b.nsPerOp - 1) * 100).toFixed(0)} % | ${Math.round(scope.meter.units)} |`,
  );
}
const template = compileTemplate(
  {
    title: "Ticket ${inputs.ticket_id} (${inputs.priority})",
    text: "Tags: ${inputs.tags}",
    first: "${steps.fetch.output.comments[0].text}",
  },
  "/bench",
);
const templateBefore = [
  "inputs.ticket_id",
  "inputs.priority",
  "inputs.tags",
  "steps.fetch.output.comments[0].text",
].map(unbounded);
const t1 = measure("unbounded", () => templateBefore.map((evaluate) => evaluate(bindings)), {
  batch: 1_000,
  rounds: 21,
});
const t2 = measure("bounded", () => template.evaluate(bindings), { batch: 1_000, rounds: 21 });
console.log(
  `| template of 4 expressions (each converting its bindings before) | ${formatNs(t1.nsPerOp)} | | ${formatNs(t2.nsPerOp)} | | |`,
);

console.log("\n## 2. Heavy expressions: time per cost unit (CPU time of this process)\n");
console.log("| Expression | items | units | CPU time | per unit |");
console.log("|---|---|---|---|---|");
const numbers = (count: number) => Array.from({ length: count }, (_, i) => i);
const heavy: [string, number][] = [
  ["inputs.l.all(a, inputs.l.all(b, inputs.l.all(c, a + b + c >= 0)))", 40],
  ["inputs.l.all(a, inputs.l.all(b, true))", 300],
  ["inputs.l.map(x, x * 2 + 1)", 20_000],
  ["inputs.l.filter(x, x % 3 == 0).map(x, string(x)).join(',')", 20_000],
  ["inputs.l.map(x, {'id': x, 'pair': [x, x]})", 20_000],
  ["inputs.o.map(x, x.id + x.tags[0])", 20_000],
];
const unlimited = { cost: Number.MAX_SAFE_INTEGER, timeMs: 600_000 };
let worstNsPerUnit = 0;
for (const [source, count] of heavy) {
  const expression = compileExpression(source, "/bench");
  const inputs = { l: numbers(count), o: numbers(count).map((i) => ({ id: `item-${i}`, tags: ["a", "b"] })) };
  let units = 0;
  const samples: number[] = [];
  for (let round = 0; round < 7; round++) {
    const scope = new BindingScope({ ...bindings, inputs, limits: unlimited });
    const cpu = process.cpuUsage();
    expression.evaluate(scope);
    const used = process.cpuUsage(cpu);
    samples.push((used.user + used.system) * 1_000);
    units = scope.meter.units;
  }
  const ns = samples.sort((x, y) => x - y)[3]!;
  worstNsPerUnit = Math.max(worstNsPerUnit, ns / units);
  console.log(`| \`${source}\` | ${count} | ${Math.round(units)} | ${formatNs(ns)} | ${(ns / units).toFixed(0)} ns |`);
}
const limit = DEFAULT_EXPRESSION_LIMITS.cost;
console.log(
  `\nThe default cost limit of ${limit} units is at most ${formatNs(limit * worstNsPerUnit)} of CPU at the slowest rate above; the time limit is ${DEFAULT_EXPRESSION_LIMITS.timeMs} ms.`,
);

console.log("\n## 3. The other route: the same typical expression in a worker thread (json.transform's pool)\n");
console.log("| Step output | in the event loop (bounded) | in a worker |");
console.log("|---|---|---|");
const pool = createCelWorkerPool({ size: 1 });
for (const count of [10, 10_000]) {
  const output = {
    id: "T-1042",
    priority: "P1",
    comments: Array.from({ length: count }, (_, i) => ({ author: `user${i}`, text: `comment ${i} `.repeat(5) })),
  };
  const local = compileExpression("steps.fetch.output.priority == 'P1'", "/bench");
  const withOutput: ExpressionBindings = {
    ...bindings,
    steps: { fetch: { output, status: "completed", error: null } },
  };
  const inLoop = measure("loop", () => local.evaluate(withOutput), { batch: 500, rounds: 15 });
  const signal = new AbortController().signal;
  const inWorker = await measureAsync(
    "worker",
    () =>
      pool.transform({ expression: "data.output.priority == 'P1'", data: { output } }, { signal, timeLimitMs: 10_000 }),
    { batch: count > 100 ? 20 : 200, rounds: 9 },
  );
  console.log(
    `| ${JSON.stringify(output).length} bytes of JSON | ${formatNs(inLoop.nsPerOp)} | ${formatNs(inWorker.nsPerOp)} |`,
  );
}
await pool.close();
