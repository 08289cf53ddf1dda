import { generatedHeader } from "./generated-header.js";
import type { PlaneModel } from "./plane-model.js";
import { buildValidationSchemas } from "./validation-schemas.js";

/**
 * `schemas.ts`: the JSON Schemas the server validates requests with, as data. The server compiles
 * them with ajv when it starts; only the server imports this file, so the SDK does not carry it.
 */
export function emitSchemas(plane: PlaneModel): string {
  const schemas = buildValidationSchemas(plane);
  return (
    `${generatedHeader(plane, `Validation schemas of the ${plane.title}.`)}\n` +
    `import type { RestValidationSchemas } from "@platform/codegen/runtime";\n\n` +
    `/** Components, and per operation \`<operationId>.parameters\` and \`<operationId>.body\` (JSON Schema 2020-12). */\n` +
    `export const ${plane.typeName}Validation: RestValidationSchemas = ${JSON.stringify(schemas, null, 2)};\n`
  );
}
