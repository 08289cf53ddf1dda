import type { ScriptDocument, Step } from "./script-document.js";

/**
 * Step paths (`current_step_path`, StepSummary `step_path`/`parent_path`, WatchStep): where a step
 * instance sits in the document, as dot-separated zero-based numbers.
 *
 * - Top-level step i is `i`.
 * - Child j of branch b of a decide or parallel step at path P is `P.b.j` (b indexes the
 *   step's `branches` list as written, whichever branch ran).
 * - Child j of iteration k of an iterate step at P is `P.k.j` (k indexes the `over` list).
 *
 * So a path alternates step index, slot (branch or iteration), step index, and always has an odd
 * number of parts. Paths depend only on the document, never on timing or on which steps ran, and
 * a thread keeps its script version for life, so a resumed thread finds every step at the same
 * path. Retries and resumes add no part (they are attempt counters). The parent of a top-level
 * step is "".
 *
 * A path template (walkSteps) writes the iteration slot as `*`: `2.*.0` is the first body step of
 * the iterate step at 2, in every iteration.
 */

export const ITERATION_PLACEHOLDER = "*";

export function childPath(parent: string, branchOrIteration: number, index: number): string {
  return `${parent}.${branchOrIteration}.${index}`;
}

/** `1.0.2` → `1`; a top-level path → "". */
export function parentPath(path: string): string {
  const parts = path.split(".");
  return parts.length <= 1 ? "" : parts.slice(0, -2).join(".");
}

/** Thread `total_steps`: the number of top-level steps. */
export function topLevelCount(document: ScriptDocument): number {
  return document.steps.length;
}

/** The numbers of a concrete path, or undefined when it is not of the form `i(.s.j)*`. */
export function parsePath(path: string): number[] | undefined {
  if (!/^(0|[1-9]\d{0,8})(\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8}))*$/.test(path)) return undefined;
  return path.split(".").map(Number);
}

/** One step of the document with its path template. */
export interface StaticStep {
  step: Step;
  /** Path with `*` for iteration slots: `2.*.0`. */
  path: string;
  /** `parentPath` of `path` ("" for top-level steps). */
  parentPath: string;
  /** JSON Pointer of the step in the document: `/steps/2/iterate/steps/0`. */
  pointer: string;
  /** 0 for top-level steps. */
  depth: number;
}

/** Every step of the document, depth first in document order (a parent before its children). */
export function* walkSteps(document: ScriptDocument): Generator<StaticStep> {
  yield* walkList(document.steps, "", "/steps", 0);
}

function* walkList(steps: readonly Step[], parent: string, pointer: string, depth: number): Generator<StaticStep> {
  for (const [index, step] of steps.entries()) {
    const path = parent === "" ? String(index) : `${parent}.${index}`;
    const here = `${pointer}/${index}`;
    yield { step, path, parentPath: parentPath(path), pointer: here, depth };
    for (const slot of slots(step))
      yield* walkList(slot.steps, `${path}.${slot.segment}`, `${here}/${slot.pointer}`, depth + 1);
  }
}

/** The child lists of a step with their path segment and pointer. */
function slots(step: Step): { segment: string; pointer: string; steps: readonly Step[] }[] {
  switch (step.primitive) {
    case "decide":
      return step.decide.branches.map((branch, b) => ({
        segment: String(b),
        pointer: `decide/branches/${b}/steps`,
        steps: branch.steps,
      }));
    case "parallel":
      return step.parallel.branches.map((branch, b) => ({
        segment: String(b),
        pointer: `parallel/branches/${b}/steps`,
        steps: branch.steps,
      }));
    case "iterate":
      return [{ segment: ITERATION_PLACEHOLDER, pointer: "iterate/steps", steps: step.iterate.steps }];
    default:
      return [];
  }
}

/**
 * The step a concrete path names (any iteration number fits an iterate slot), or undefined when
 * no step of the document is there: for WatchStep and ResumeThread to check a path.
 */
export function stepAtPath(document: ScriptDocument, path: string): Step | undefined {
  return resolve(document, path)?.step;
}

/** The path template of a concrete path: iteration slots become `*` (`2.3.0` → `2.*.0`). */
export function pathTemplate(document: ScriptDocument, path: string): string | undefined {
  return resolve(document, path)?.template;
}

function resolve(document: ScriptDocument, path: string): { step: Step; template: string } | undefined {
  const numbers = parsePath(path);
  if (numbers === undefined) return undefined;
  const parts = numbers.map(String);
  let step = document.steps[numbers[0] as number];
  for (let at = 1; step !== undefined && at < numbers.length; at += 2) {
    const slot = numbers[at] as number;
    let list: readonly Step[] | undefined;
    if (step.primitive === "iterate") {
      list = step.iterate.steps;
      parts[at] = ITERATION_PLACEHOLDER;
    } else if (step.primitive === "decide") {
      list = step.decide.branches[slot]?.steps;
    } else if (step.primitive === "parallel") {
      list = step.parallel.branches[slot]?.steps;
    }
    step = list?.[numbers[at + 1] as number];
  }
  return step === undefined ? undefined : { step, template: parts.join(".") };
}
