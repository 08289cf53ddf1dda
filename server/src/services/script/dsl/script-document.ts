import type { JsonObject } from "./cel-json.js";
import type { CompiledExpression } from "./expressions.js";
import type { CompiledTemplate } from "./templates.js";

/**
 * The model of a parsed, validated script (DSL `script/1`, documented in docs/script-dsl.md).
 * parseScript builds it; the engine runs it; nothing else builds one, so every invariant the
 * parser checks (unique ids, one primitive per step, bounds) holds here.
 *
 * Document keys are camelCase, like the model's, except that durations are written as text
 * (`timeout: 30s`, `wait: {for: 5m}`, retry `initial`/`max`) and held here in milliseconds.
 * Expressions and templates are compiled; `JSON.stringify` of a document prints them as written,
 * so the model serialises back to an equivalent document.
 */

export const DSL_VERSION = "script/1";

export type { JsonObject, JsonValue } from "./cel-json.js";

export interface ScriptDocument {
  dsl: typeof DSL_VERSION;
  /** Informational; the script's registry name comes from CreateScript. */
  name?: string;
  /** Defaults to "". */
  description: string;
  /** JSON Schema (type object) of the thread input; default `{type: object}`. */
  inputs: JsonObject;
  /** JSON Schema (type object) of the final output; default `{type: object}`. */
  outputs: JsonObject;
  defaults: StepDefaults;
  steps: Step[];
  /** The final output; without it, the output of the last top-level step that completed. */
  output?: CompiledTemplate;
}

/** Applied to execute steps and llm decides that do not set their own (see effectivePolicy). */
export interface StepDefaults {
  timeout?: number;
  retry?: RetryPolicy;
}

/**
 * Attempts of a call (an execute step's tool call, an llm decide's model call). `maxAttempts`
 * counts the first attempt. Delay before attempt n+1: fixed → `initialMs`; exponential →
 * `min(initialMs * 2^(n-1), maxMs)`. No jitter, so the schedule is predictable in the step log.
 */
export interface RetryPolicy {
  maxAttempts: number;
  backoff: "fixed" | "exponential";
  initialMs: number;
  maxMs: number;
}

export const PRIMITIVES = [
  "execute",
  "decide",
  "iterate",
  "parallel",
  "yield",
  "wait",
  "approval",
  "set",
  "fail",
] as const;
export type Primitive = (typeof PRIMITIVES)[number];

export interface StepCommon {
  /** `[a-z][a-z0-9_]*`, unique in the whole script; how expressions name it (`steps.<id>`). */
  id: string;
  /** Display name for events and summaries; defaults to the id. */
  name: string;
  /** Guard: the step runs only when true, else it is skipped. */
  when?: CompiledExpression;
  /** Milliseconds; per attempt for execute and llm decide, for the whole step for iterate and parallel. */
  timeout?: number;
  /** Only on execute steps and llm decides. */
  retry?: RetryPolicy;
  /** A failure is recorded in `steps.<id>` and the thread goes on. */
  continueOnError: boolean;
}

export interface ExecuteStep extends StepCommon {
  primitive: "execute";
  execute: { tool: string; input: CompiledTemplate };
}

export interface DecideBranch {
  name: string;
  /** Rule strategy: the branch's condition. */
  when?: CompiledExpression;
  /** LLM strategy: what the branch is for, shown to the model. */
  description?: string;
  /** Taken when no other branch is chosen; at most one per decide. */
  default: boolean;
  steps: Step[];
}

export interface DecideStep extends StepCommon {
  primitive: "decide";
  decide: { strategy: "rule" | "llm"; prompt?: CompiledTemplate; model?: string; branches: DecideBranch[] };
}

export const MAX_ITERATE_CONCURRENCY = 64;

export interface IterateStep extends StepCommon {
  primitive: "iterate";
  iterate: { over: CompiledExpression; as: string; maxConcurrency: number; steps: Step[] };
}

export interface ParallelBranch {
  name: string;
  steps: Step[];
}

export interface ParallelStep extends StepCommon {
  primitive: "parallel";
  parallel: { branches: ParallelBranch[]; failFast: boolean };
}

export interface YieldStep extends StepCommon {
  primitive: "yield";
  yield: { value: CompiledTemplate };
}

/** A relative wait, an absolute time written in the document, or an expression giving the time. */
export type WaitSpec = { forMs: number } | { untilMs: number } | { until: CompiledExpression };

export interface WaitStep extends StepCommon {
  primitive: "wait";
  wait: WaitSpec;
}

export interface ApprovalStep extends StepCommon {
  primitive: "approval";
  approval: { prompt?: CompiledTemplate; timeoutMs?: number; onTimeout: "continue" | "fail" };
}

export interface SetStep extends StepCommon {
  primitive: "set";
  set: { values: Record<string, CompiledTemplate> };
}

export interface FailStep extends StepCommon {
  primitive: "fail";
  fail: { message: CompiledTemplate };
}

export type Step =
  ExecuteStep | DecideStep | IterateStep | ParallelStep | YieldStep | WaitStep | ApprovalStep | SetStep | FailStep;

/** The tool an llm decide calls; listed in tools_required (tools-required.ts). */
export const LLM_TOOL = "llm.complete";

/**
 * The timeout and retry a step runs with: its own, else the document defaults when the step
 * makes a call (execute, llm decide). Containers (iterate, parallel) take no defaults, so a
 * script-wide `timeout: 2m` never cuts a long loop short; rule decides and the other primitives
 * have neither. `retry` is undefined when the step is attempted once.
 */
export function effectivePolicy(document: ScriptDocument, step: Step): { timeout?: number; retry?: RetryPolicy } {
  const makesCall = step.primitive === "execute" || (step.primitive === "decide" && step.decide.strategy === "llm");
  const timeout = step.timeout ?? (makesCall ? document.defaults.timeout : undefined);
  const retry = makesCall ? (step.retry ?? document.defaults.retry) : undefined;
  return { ...(timeout === undefined ? {} : { timeout }), ...(retry === undefined ? {} : { retry }) };
}

/** The delay before attempt `attempt + 1` after attempt `attempt` (from 1) failed. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  if (policy.backoff === "fixed") return policy.initialMs;
  return Math.min(policy.initialMs * 2 ** Math.max(0, attempt - 1), policy.maxMs);
}

/** The child step lists of a step: branches of decide and parallel, the body of iterate. */
export function childLists(step: Step): Step[][] {
  switch (step.primitive) {
    case "decide":
      return step.decide.branches.map((branch) => branch.steps);
    case "parallel":
      return step.parallel.branches.map((branch) => branch.steps);
    case "iterate":
      return [step.iterate.steps];
    default:
      return [];
  }
}
