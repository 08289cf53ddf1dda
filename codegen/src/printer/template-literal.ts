import { parsePathTemplate, type PathTemplate } from "../../runtime/path-template/index.js";
import { GenerationError } from "../generation-error.js";

/**
 * A route template as generated code writes it: its text, which the route table parses when it
 * loads. The text is parsed here with the same parser and must give back the very template the
 * generator checked, so that loading a generated table cannot fail or route differently.
 */
export function templateLiteral(template: PathTemplate, where: string): string {
  let reparsed: PathTemplate;
  try {
    reparsed = parsePathTemplate(template.source);
  } catch (error) {
    throw new GenerationError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (JSON.stringify(reparsed) !== JSON.stringify(template)) {
    throw new GenerationError(
      `${where}: the path template ${JSON.stringify(template.source)} does not parse back to itself`,
    );
  }
  return JSON.stringify(template.source);
}
