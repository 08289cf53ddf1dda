import { Code, ConnectError } from "@connectrpc/connect";

/**
 * Every problem parseScript found in a script source, not just the first. Each problem names
 * where it is twice: `line`/`column` (1-based, in the source text) for the person at the editor,
 * and `path` (a JSON Pointer such as `/steps/2/iterate/over`) for tools and for sources whose line
 * numbers are not meaningful (a JSON document built by a program). `path` is "" for the whole
 * document and for YAML syntax errors.
 */

export interface ScriptProblem {
  path: string;
  line: number;
  column: number;
  message: string;
}

/** How many problems the message lists; all of them stay in `problems`. */
const LISTED = 50;

export class ScriptValidationError extends Error {
  override name = "ScriptValidationError";
  readonly problems: readonly ScriptProblem[];

  constructor(problems: readonly ScriptProblem[]) {
    const sorted = [...problems].sort(compareProblems);
    super(describe(sorted));
    this.problems = sorted;
  }

  /**
   * The error CreateScript returns: INVALID_ARGUMENT naming the request field, then the problems
   * (the first one first, so a client that shows one line shows the first problem).
   */
  toConnectError(field = "source"): ConnectError {
    return new ConnectError(`${field}: ${this.message}`, Code.InvalidArgument);
  }
}

/** `3:7 /steps/0/exectue: unknown key "exectue" (did you mean "execute"?)` */
export function formatProblem(problem: ScriptProblem): string {
  const where = problem.path === "" ? "" : ` ${problem.path}`;
  return `${problem.line}:${problem.column}${where}: ${problem.message}`;
}

function describe(problems: readonly ScriptProblem[]): string {
  if (problems.length === 1) return `script is not valid: ${formatProblem(problems[0] as ScriptProblem)}`;
  const listed = problems.slice(0, LISTED).map((problem) => `\n  ${formatProblem(problem)}`);
  const more = problems.length > LISTED ? `\n  … and ${problems.length - LISTED} more` : "";
  return `script is not valid (${problems.length} problems):${listed.join("")}${more}`;
}

/** Source order, then path, so the message reads top to bottom. */
function compareProblems(a: ScriptProblem, b: ScriptProblem): number {
  return a.line - b.line || a.column - b.column || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}
