import type { RestOperation, RestPlane } from "../../runtime/rest/rest-plane.js";
import { generatedHeader } from "./generated-header.js";
import type { OperationModel } from "./operation-model.js";
import type { PlaneModel } from "./plane-model.js";

/** `routes.ts`: the plane's route table, data only, read by the server's router and the SDK. */
export function emitRoutes(plane: PlaneModel): string {
  const table = routeTableOf(plane);
  const operations = table.operations.map((op) => `    ${printOperation(op)},\n`).join("");
  return (
    `${generatedHeader(plane, `Route table of the ${plane.title}.`)}\n` +
    `import type { RestPlane } from "@platform/codegen/runtime";\n\n` +
    `/** Every operation of the ${plane.title}: method, path, parameters, media types, responses and access. */\n` +
    `export const ${plane.typeName}Routes: RestPlane = {\n` +
    `  name: ${JSON.stringify(table.name)},\n` +
    `  basePath: ${JSON.stringify(table.basePath)},\n` +
    `  errorBody: ${JSON.stringify(table.errorBody)},\n` +
    `  operations: [\n${operations}  ],\n` +
    `};\n`
  );
}

/** The route table as data; the tests serve and call it without printing it. */
export function routeTableOf(plane: PlaneModel): RestPlane {
  return { name: plane.name, basePath: plane.basePath, errorBody: plane.errorBody, operations: plane.operations.map(restOperationOf) };
}

function restOperationOf(op: OperationModel): RestOperation {
  return {
    operationId: op.operationId,
    httpMethod: op.httpMethod,
    template: op.template,
    parameters: op.parameters.map((p) => ({ name: p.name, in: p.in, required: p.required, repeated: p.repeated })),
    ...(op.requestBody ? { requestBody: { required: op.requestBody.required, contentTypes: op.requestBody.contentTypes } } : {}),
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
function printOperation(op: RestOperation): string {
  const lines = Object.entries(op).map(([key, value]) => `      ${key}: ${JSON.stringify(value)},`);
  return `{\n${lines.join("\n")}\n    }`;
}
