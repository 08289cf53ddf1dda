import { NOT_IMPLEMENTED_DOC } from "../not-implemented.js";
import type { TsFile, TsImport } from "../printer/ts-file.js";
import type { OperationModel } from "./operation-model.js";
import { SERVER_RUNTIME_MODULE } from "../printer/runtime-module.js";
import { createPlaneFile } from "./plane-file.js";
import type { PlaneModel } from "./plane-model.js";

/**
 * `handler.ts`: what the server implements — per operation its input (parameters converted to
 * their types, defaults filled in, body validated), the implementation type `<Plane>Implementation`
 * with one method answering a documented result — and the function that serves an implementation
 * with the plane's route table.
 */
export function emitHandler(plane: PlaneModel): string {
  const f = createPlaneFile(
    plane,
    "handler.ts",
    `The implementation type of the ${plane.title} and the function that serves it.`,
  );
  const name = plane.typeName;
  const context = `${name}Context`;
  const type = (typeName: string) => f.import(typeName, "./types.js", true);
  for (const op of plane.operations) printInputType(f, op, type);

  const variables = plane.serverVariables.length > 0 ? type(`${name}ServerVariables`) : "Record<string, never>";
  f.print();
  f.print(
    f.jsDoc(
      "What a handler knows besides its input: the base path's variables, headers, the caller found by middleware.",
    ),
    `export type ${context} = `,
    f.import("RestCallContext", SERVER_RUNTIME_MODULE, true),
    "<",
    variables,
    ">;",
  );
  f.print();
  f.print(
    f.jsDoc(
      `What a handler of the ${plane.title} implements: one method per operation, answering one of its documented responses.`,
    ),
    `export interface ${name}Implementation {`,
  );
  for (const op of plane.operations) {
    // The input types are declared above, in this file.
    const input = op.handlerValidation
      ? [`${op.typeName}Input | `, f.import("RestInvalidInput", SERVER_RUNTIME_MODULE, true)]
      : [`${op.typeName}Input`];
    f.print(
      f.jsDoc(methodDoc(op), "  "),
      `  ${op.operationId}(input: `,
      input,
      `, context: ${context}): Promise<`,
      type(`${op.typeName}Result`),
      ">;",
    );
  }
  f.print("}");
  f.print();
  f.print(
    f.jsDoc(
      `Serves an implementation of the ${plane.title}: routing, parsing, validation, errors in the document's shape.\n\n${NOT_IMPLEMENTED_DOC}`,
    ),
    `export function create${name}Handler(implementation: Partial<${name}Implementation>, options?: `,
    f.import("RestPlaneHandlerOptions", SERVER_RUNTIME_MODULE, true),
    "): ",
    f.import("RestPlaneHandler", SERVER_RUNTIME_MODULE, true),
    " {",
  );
  f.print(
    "  return ",
    f.import("createRestPlaneHandler", SERVER_RUNTIME_MODULE),
    "(",
    f.import(`${name}Routes`, "./routes.js"),
    ", ",
    f.import(`${name}Validation`, "./schemas.js"),
    ", implementation, options);",
  );
  f.print("}");
  return f.content();
}

/** The handler's input: every part present, query parameters with a default no longer optional. */
function printInputType(f: TsFile, op: OperationModel, type: (name: string) => TsImport): void {
  const name = op.typeName;
  const part = (place: "path" | "query" | "header", suffix: string) => {
    const list = op.parameters.filter((p) => p.in === place);
    if (list.length === 0) return "Record<string, never>";
    const params = type(`${name}${suffix}`);
    const defaulted = list
      .filter((p) => p.defaultValue !== undefined && !p.required)
      .map((p) => JSON.stringify(p.name));
    return defaulted.length === 0 ? params : [params, " & Required<Pick<", params, `, ${defaulted.join(" | ")}>>`];
  };
  f.print();
  f.print(
    f.jsDoc(`What the handler of ${op.operationId} (${op.httpMethod} ${op.path}) receives.`),
    `export interface ${name}Input {`,
  );
  f.print("  path: ", part("path", "PathParams"), ";");
  f.print("  query: ", part("query", "QueryParams"), ";");
  if (op.parameters.some((p) => p.in === "header")) f.print("  headers: ", part("header", "HeaderParams"), ";");
  if (op.requestBody) f.print(`  body${op.requestBody.required ? "" : "?"}: `, type(`${name}RequestBody`), ";");
  f.print("}");
}

function methodDoc(op: OperationModel): string {
  const lines = [op.summary];
  if (op.description) lines.push("", op.description);
  lines.push(
    "",
    `\`${op.httpMethod} ${op.path}\`${op.handlerValidation ? "; an invalid request reaches the handler too" : ""}`,
  );
  if (op.deprecated) lines.push("", "@deprecated");
  return lines.join("\n");
}
