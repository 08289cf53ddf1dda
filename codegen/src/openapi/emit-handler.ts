import { generatedHeader } from "./generated-header.js";
import type { OperationModel } from "./operation-model.js";
import type { PlaneModel } from "./plane-model.js";
import { jsDoc, typeImport } from "./ts-syntax.js";

/**
 * `handler.ts`: what the server implements — per operation its input (parameters converted to
 * their types, defaults filled in, body validated) and one method answering a documented
 * result — and the function that serves an implementation with the plane's route table.
 */
export function emitHandler(plane: PlaneModel): string {
  const name = plane.typeName;
  const used = new Set<string>();
  const context = `${name}Context`;
  const inputs = plane.operations.map((op) => inputType(op, used)).join("");
  const methods = plane.operations
    .map((op) => {
      used.add(`${op.typeName}Result`);
      const input = op.handlerValidation ? `${op.typeName}Input | RestInvalidInput` : `${op.typeName}Input`;
      return `${jsDoc(methodDoc(op), "  ")}  ${op.operationId}(input: ${input}, context: ${context}): Promise<${op.typeName}Result>;\n`;
    })
    .join("");
  const variables = plane.serverVariables.length > 0 ? `${name}ServerVariables` : "Record<string, never>";
  if (plane.serverVariables.length > 0) used.add(variables);
  return (
    `${generatedHeader(plane, `The handler interface of the ${plane.title} and the function that serves it.`)}\n` +
    `import { createRestPlaneHandler } from "@platform/codegen/runtime/server";\n` +
    `import type { RestCallContext, RestInvalidInput, RestPlaneHandler, RestPlaneHandlerOptions } from "@platform/codegen/runtime/server";\n` +
    `import { ${name}Routes } from "./routes.js";\n` +
    `import { ${name}Validation } from "./schemas.js";\n` +
    typeImport(used, "./types.js") +
    inputs +
    `\n/** What a handler knows besides its input: the base path's variables, headers, the caller found by middleware. */\n` +
    `export type ${context} = RestCallContext<${variables}>;\n` +
    `\n/** The ${plane.title}: one method per operation, answering one of the operation's documented responses. */\n` +
    `export interface ${name}Handler {\n${methods}}\n` +
    `\n${jsDoc(
      `Serves an implementation of the ${plane.title}: routing, parsing, validation, errors in the document's shape. ` +
        "Operations left out of a partial implementation answer 501.",
    )}` +
    `export function create${name}Handler(implementation: Partial<${name}Handler>, options?: RestPlaneHandlerOptions): RestPlaneHandler {\n` +
    `  return createRestPlaneHandler(${name}Routes, ${name}Validation, implementation, options);\n` +
    `}\n`
  );
}

/** The handler's input: every part present, query parameters with a default no longer optional. */
function inputType(op: OperationModel, used: Set<string>): string {
  const name = op.typeName;
  const part = (place: "path" | "query" | "header", suffix: string) => {
    const list = op.parameters.filter((p) => p.in === place);
    if (list.length === 0) return "Record<string, never>";
    used.add(`${name}${suffix}`);
    const defaulted = list.filter((p) => p.defaultValue !== undefined && !p.required).map((p) => JSON.stringify(p.name));
    return defaulted.length === 0 ? `${name}${suffix}` : `${name}${suffix} & Required<Pick<${name}${suffix}, ${defaulted.join(" | ")}>>`;
  };
  const fields = [`  path: ${part("path", "PathParams")};\n`, `  query: ${part("query", "QueryParams")};\n`];
  if (op.parameters.some((p) => p.in === "header")) fields.push(`  headers: ${part("header", "HeaderParams")};\n`);
  if (op.requestBody) {
    used.add(`${name}RequestBody`);
    fields.push(`  body${op.requestBody.required ? "" : "?"}: ${name}RequestBody;\n`);
  }
  return `\n${jsDoc(`What the handler of ${op.operationId} (${op.httpMethod} ${op.path}) receives.`)}export interface ${name}Input {\n${fields.join("")}}\n`;
}

function methodDoc(op: OperationModel): string {
  const lines = [op.summary];
  if (op.description) lines.push("", op.description);
  lines.push("", `\`${op.httpMethod} ${op.path}\`${op.handlerValidation ? "; an invalid request reaches the handler too" : ""}`);
  if (op.deprecated) lines.push("", "@deprecated");
  return lines.join("\n");
}
