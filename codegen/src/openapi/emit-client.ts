import { generatedHeader } from "./generated-header.js";
import type { OperationModel } from "./operation-model.js";
import type { PlaneModel } from "./plane-model.js";
import { jsDoc, typeImport } from "./ts-syntax.js";

/**
 * `client.ts`: the SDK's typed client of the plane — one method per operation answering its
 * documented successes (errors are thrown as RestCallError) — and its factory. Browser-safe: it
 * imports the route table and the types only.
 */
export function emitClient(plane: PlaneModel): string {
  const name = plane.typeName;
  const used = new Set<string>();
  const methods = plane.operations
    .map((op) => {
      used.add(`${op.typeName}Call`).add(`${op.typeName}Success`);
      const optional = callIsOptional(op) ? "?" : "";
      return `${jsDoc(methodDoc(op), "  ")}  ${op.operationId}(call${optional}: ${op.typeName}Call, options?: RestCallOptions): Promise<${op.typeName}Success>;\n`;
    })
    .join("");
  const hasVariables = plane.serverVariables.length > 0;
  if (hasVariables) used.add(`${name}ServerVariables`);
  const optionsType = hasVariables
    ? `\n/** Where the plane is: the base URL, and the values of \`${plane.basePath.source}\`. */\n` +
      `export interface ${name}ClientOptions extends RestClientOptions<${name}ServerVariables> {\n  readonly serverVariables: ${name}ServerVariables;\n}\n`
    : `\nexport type ${name}ClientOptions = RestClientOptions;\n`;
  return (
    `${generatedHeader(plane, `The SDK client of the ${plane.title}.`)}\n` +
    `import { createRestClient } from "@platform/codegen/runtime";\n` +
    `import type { RestCallOptions, RestClientOptions } from "@platform/codegen/runtime";\n` +
    `import { ${name}Routes } from "./routes.js";\n` +
    typeImport(used, "./types.js") +
    optionsType +
    `\n/** Client of the ${plane.title}. */\n` +
    `export interface ${name}Client {\n${methods}}\n` +
    `\n/** Creates a client of the ${plane.title} over fetch. */\n` +
    `export function create${name}Client(options: ${name}ClientOptions): ${name}Client {\n` +
    `  return createRestClient<${name}Client>(${name}Routes, options);\n` +
    `}\n`
  );
}

function callIsOptional(op: OperationModel): boolean {
  return !op.parameters.some((p) => p.required) && !op.requestBody?.required;
}

function methodDoc(op: OperationModel): string {
  const lines = [op.summary];
  if (op.description) lines.push("", op.description);
  lines.push("", `\`${op.httpMethod} ${op.path}\``);
  if (op.deprecated) lines.push("", "@deprecated");
  return lines.join("\n");
}
