import type { OperationModel } from "./operation-model.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";
import { createPlaneFile } from "./plane-file.js";
import type { PlaneModel } from "./plane-model.js";

/**
 * `client.ts`: the SDK's typed client of the plane — one method per operation answering its
 * documented successes (errors are thrown as RestCallError) — and its factory. Browser-safe: it
 * imports the route table and the types only.
 */
export function emitClient(plane: PlaneModel): string {
  const f = createPlaneFile(plane, "client.ts", `The SDK client of the ${plane.title}.`);
  const name = plane.typeName;
  const type = (typeName: string) => f.import(typeName, "./types.js", true);
  const clientOptions = f.import("RestClientOptions", RUNTIME_MODULE, true);
  f.print();
  if (plane.serverVariables.length > 0) {
    const variables = type(`${name}ServerVariables`);
    f.print(
      f.jsDoc(`Where the plane is: the base URL, and the values of \`${plane.basePath.source}\`.`),
      `export interface ${name}ClientOptions extends `,
      clientOptions,
      "<",
      variables,
      "> {",
    );
    f.print("  readonly serverVariables: ", variables, ";");
    f.print("}");
  } else {
    f.print(`export type ${name}ClientOptions = `, clientOptions, ";");
  }
  f.print();
  f.print(f.jsDoc(`Client of the ${plane.title}.`), `export interface ${name}Client {`);
  const callOptions = f.import("RestCallOptions", RUNTIME_MODULE, true);
  for (const op of plane.operations) {
    const optional = callIsOptional(op) ? "?" : "";
    f.print(
      f.jsDoc(methodDoc(op), "  "),
      `  ${op.operationId}(call${optional}: `,
      type(`${op.typeName}Call`),
      ", options?: ",
      callOptions,
      "): Promise<",
      type(`${op.typeName}Success`),
      ">;",
    );
  }
  f.print("}");
  f.print();
  f.print(
    f.jsDoc(`Creates a client of the ${plane.title} over fetch.`),
    `export function create${name}Client(options: ${name}ClientOptions): ${name}Client {`,
  );
  f.print(
    "  return ",
    f.import("createRestClient", RUNTIME_MODULE),
    `<${name}Client>(`,
    f.import(`${name}Routes`, "./routes.js"),
    ", options);",
  );
  f.print("}");
  return f.content();
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
