import { compileContract } from "../dsl/contract.js";
import type { JsonValue, ScriptDocument } from "../dsl/script-document.js";

/** Most warnings recorded on one thread; the last line counts the rest. */
export const MAX_OUTPUT_WARNINGS = 20;

/**
 * What is wrong with a completed thread's final output against the script's `outputs` schema,
 * one line per mismatch (`output/total: must be number`), at most MAX_OUTPUT_WARNINGS lines.
 * docs/script-dsl.md promises that a mismatch does not fail a thread that did its work, so this
 * never throws: the lines are recorded on the thread as warnings.
 */
export function outputWarnings(document: ScriptDocument, output: JsonValue): string[] {
  let lines: string[];
  try {
    lines = compileContract(document).validateOutput(output);
  } catch (error) {
    return [
      `output: could not be checked against the outputs schema: ${error instanceof Error ? error.message : String(error)}`,
    ];
  }
  if (lines.length <= MAX_OUTPUT_WARNINGS) return lines;
  const kept = lines.slice(0, MAX_OUTPUT_WARNINGS - 1);
  return [...kept, `… and ${lines.length - kept.length} more mismatches with the outputs schema`];
}
