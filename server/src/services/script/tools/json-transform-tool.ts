import { formatDuration } from "../dsl/duration.js";
import type { CelWorkerPool } from "./cel-worker-pool.js";
import { NATIVE_TOOL_VERSION, NATIVE_TOOLS_CREATED_AT_MS, nativeRuntime } from "./native-runtime.js";
import type { Tool } from "./tool.js";

/** How long one evaluation may run before its worker is terminated. */
export const TRANSFORM_TIME_LIMIT_MS = 10_000;

export interface JsonTransformToolOptions {
  /** Where expressions are evaluated: never on the event loop (see cel-worker-pool.ts). */
  readonly workers: CelWorkerPool;
  /** Limit on one evaluation; default TRANSFORM_TIME_LIMIT_MS. */
  readonly timeLimitMs?: number;
}

/**
 * `json.transform`: evaluates a CEL expression with the input's `data` bound as `data` (the
 * evaluation and its number rule are in cel-transform.ts). It runs in a worker thread with a
 * memory limit and a time limit, so a runaway expression (nested comprehensions are quadratic:
 * `data.map(x, data.filter(y, y < x))` over 2,000 items takes seconds) fails its own step and
 * leaves every other request alone. The runtime timeout sits above the time limit to cover a wait
 * for a free worker.
 */
export function createJsonTransformTool(options: JsonTransformToolOptions): Tool {
  const timeLimitMs = options.timeLimitMs ?? TRANSFORM_TIME_LIMIT_MS;
  return {
    name: "json.transform",
    version: NATIVE_TOOL_VERSION,
    description:
      "Evaluates a CEL expression over JSON data bound as `data` (standard library and string extensions), " +
      "for example `data.items.filter(i, i.price > 10).map(i, i.name)`. Whole JSON numbers are CEL ints, others doubles. " +
      `An evaluation is stopped after ${formatDuration(timeLimitMs)}.`,
    inputs: [
      { name: "data", type: "", required: true, description: "any JSON value, bound as `data`" },
      { name: "expression", type: "string", required: true, description: "the CEL expression" },
    ],
    outputs: [{ name: "result", type: "", required: true, description: "the expression's value as JSON" }],
    runtime: { ...nativeRuntime("jsonTransform", timeLimitMs + 20_000), memoryMiB: options.workers.memoryMiB },
    createdAtMs: NATIVE_TOOLS_CREATED_AT_MS,
    invoke: async (input, context) => ({
      result: await options.workers.transform(
        { expression: String(input.expression), data: input.data ?? null },
        { signal: context.signal, timeLimitMs },
      ),
    }),
  };
}
