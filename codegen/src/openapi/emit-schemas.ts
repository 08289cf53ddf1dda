import { RUNTIME_MODULE } from "../printer/runtime-module.js";
import { createPlaneFile } from "./plane-file.js";
import type { PlaneModel } from "./plane-model.js";
import { buildValidationSchemas } from "./validation-schemas.js";

/**
 * `schemas.ts`: the JSON Schemas the server validates requests with, as data. The server compiles
 * them with ajv when it starts; only the server imports this file, so the SDK does not carry it.
 */
export function emitSchemas(plane: PlaneModel): string {
  const f = createPlaneFile(plane, "schemas.ts", `Validation schemas of the ${plane.title}.`);
  const schemas = buildValidationSchemas(plane);
  const type = f.import("RestValidationSchemas", RUNTIME_MODULE, true);
  f.print(
    f.jsDoc("Components, and per operation `<operationId>.parameters` and `<operationId>.body` (JSON Schema 2020-12)."),
    `export const ${plane.typeName}Validation: `,
    type,
    ` = ${JSON.stringify(schemas, null, 2)};`,
  );
  return f.content();
}
