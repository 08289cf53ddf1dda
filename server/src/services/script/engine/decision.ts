import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { BindingScope, ExpressionBindings } from "../dsl/expressions.js";
import type { Step } from "../dsl/script-document.js";
import { StepFailure } from "./run-outcome.js";

type DecideStep = Extract<Step, { primitive: "decide" }>;

/**
 * How a decide step chose its branch. It is saved as the step's input before the branch runs, so
 * a thread that replays the step takes the same branch and never asks a model twice.
 */
export interface Decision {
  readonly strategy: "rule" | "llm";
  /** Empty when no branch was chosen (no condition matched and there is no default). */
  readonly chosen_branch: string;
  readonly reasoning: string;
}

/**
 * Strategy `rule`: the first branch whose condition holds, else the default branch, else none.
 * Given one BindingScope, the conditions share one conversion of the bindings and one expression budget.
 */
export function ruleDecision(step: DecideStep, bindings: ExpressionBindings | BindingScope): Decision {
  for (const branch of step.decide.branches) {
    if (!branch.default && branch.when?.evaluateCondition(bindings)) {
      return { strategy: "rule", chosen_branch: branch.name, reasoning: `condition ${branch.when.source} matched` };
    }
  }
  const fallback = step.decide.branches.find((b) => b.default);
  return {
    strategy: "rule",
    chosen_branch: fallback?.name ?? "",
    reasoning: fallback ? "no condition matched: default branch" : "no condition matched",
  };
}

/** Strategy `llm`: the llm.complete input asking the model for one branch name and a reason. */
export function llmDecisionRequest(step: DecideStep, bindings: ExpressionBindings): JsonObject {
  const question = step.decide.prompt ? String(step.decide.prompt.evaluate(bindings)) : "";
  const prompt = [
    question,
    "",
    "Choose exactly one of these branches:",
    ...step.decide.branches.map((b) => `- ${b.name}${b.description ? `: ${b.description}` : ""}`),
    "",
    'Answer with JSON only: {"branch": "<one of the names>", "reasoning": "<one sentence>"}',
  ].join("\n");
  return { prompt, responseFormat: "json", ...(step.decide.model ? { model: step.decide.model } : {}) };
}

/**
 * Strategy `llm`: the decision in the model's answer. An answer that names no branch takes the
 * default branch, or fails the step when there is none (docs/script-dsl.md, decide).
 */
export function llmDecision(step: DecideStep, path: string, answer: JsonValue): Decision {
  const json = (answer as { json?: { branch?: unknown; reasoning?: unknown } } | null)?.json;
  const names = step.decide.branches.map((b) => b.name);
  const branch = typeof json?.branch === "string" ? json.branch : "";
  if (names.includes(branch))
    return {
      strategy: "llm",
      chosen_branch: branch,
      reasoning: typeof json?.reasoning === "string" ? json.reasoning : "",
    };
  const fallback = step.decide.branches.find((b) => b.default);
  const refused = `the model chose ${JSON.stringify(branch)}, which is not one of ${names.join(", ")}`;
  if (!fallback) throw new StepFailure(refused, path, step.name);
  return { strategy: "llm", chosen_branch: fallback.name, reasoning: `${refused}: default branch` };
}
