import { LLM_TOOL } from "./script-document.js";
import type { ScriptDocument } from "./script-document.js";
import { walkSteps } from "./step-paths.js";

/**
 * A script's `tools_required`: the tools its steps may call, derived from the document (never
 * declared by hand, so it cannot drift). That is the `tool` of every execute step, wherever it is
 * nested, and `llm.complete` (LLM_TOOL) when a decide step has strategy `llm`, because the engine
 * asks the model through that tool. Sorted by code unit, each name once, so equal documents give
 * equal lists.
 *
 * A tool behind a branch that never runs is still listed: the list says what a thread may need,
 * which is what a caller checks before creating one.
 */
export function toolsRequired(document: ScriptDocument): string[] {
  const tools = new Set<string>();
  for (const { step } of walkSteps(document)) {
    if (step.primitive === "execute") tools.add(step.execute.tool);
    if (step.primitive === "decide" && step.decide.strategy === "llm") tools.add(LLM_TOOL);
  }
  return [...tools].sort();
}
