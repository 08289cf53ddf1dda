import type { RestOperation, RestPlane } from "../../runtime/rest/rest-plane.js";
import { templateLiteral } from "../printer/template-literal.js";
import type { OperationModel } from "./operation-model.js";
import { RUNTIME_MODULE } from "../printer/runtime-module.js";
import { createPlaneFile } from "./plane-file.js";
import type { PlaneModel } from "./plane-model.js";

/**
 * `routes.ts`: the plane's route table `<Plane>Routes`, data only, read by the server's router and
 * the SDK. Templates are written as their text and parsed once when the table loads.
 */
export function emitRoutes(plane: PlaneModel): string {
  const f = createPlaneFile(plane, "routes.ts", `Route table of the ${plane.title}.`);
  const table = routeTableOf(plane);
  const define = f.import("defineRestPlane", RUNTIME_MODULE);
  f.print(
    f.jsDoc(`Every operation of the ${plane.title}: method, path, parameters, media types, responses and access.`),
    `export const ${plane.typeName}Routes = `,
    define,
    "({",
  );
  f.print(`  name: ${JSON.stringify(table.name)},`);
  f.print(`  basePath: ${templateLiteral(table.basePath, `${plane.source}: server URL`)},`);
  f.print(`  errorBody: ${JSON.stringify(table.errorBody)},`);
  f.print("  operations: [");
  for (const op of table.operations) f.print(`    ${printOperation(plane, op)},`);
  f.print("  ],");
  f.print("});");
  return f.content();
}

/** The route table as data; the tests serve and call it without printing it. */
export function routeTableOf(plane: PlaneModel): RestPlane {
  return {
    name: plane.name,
    basePath: plane.basePath,
    errorBody: plane.errorBody,
    operations: plane.operations.map(restOperationOf),
  };
}

function restOperationOf(op: OperationModel): RestOperation {
  return {
    operationId: op.operationId,
    httpMethod: op.httpMethod,
    template: op.template,
    parameters: op.parameters.map((p) => ({ name: p.name, in: p.in, required: p.required, repeated: p.repeated })),
    ...(op.requestBody
      ? { requestBody: { required: op.requestBody.required, contentTypes: op.requestBody.contentTypes } }
      : {}),
    responses: op.responses.map((r) => ({
      status: r.status,
      contentTypes: r.contents.map((c) => c.mediaType),
      headers: r.headers.map((h) => (h.numeric ? { name: h.name, numeric: true as const } : { name: h.name })),
    })),
    auth: op.auth,
    ...(op.rateLimit ? { rateLimit: op.rateLimit } : {}),
    ...(op.handlerValidation ? { handlerValidation: true as const } : {}),
    errorBody: op.errorBody,
  };
}

/** One operation per block, one fact per line, so a change to the document shows as a small diff. */
function printOperation(plane: PlaneModel, op: RestOperation): string {
  const lines = Object.entries(op).map(([key, value]) => {
    const text =
      key === "template" ? templateLiteral(op.template, `${plane.source} ${op.operationId}`) : JSON.stringify(value);
    return `      ${key}: ${text},`;
  });
  return `{\n${lines.join("\n")}\n    }`;
}
