import { emitClient } from "./emit-client.js";
import { emitHandler } from "./emit-handler.js";
import { emitRoutes } from "./emit-routes.js";
import { emitSchemas } from "./emit-schemas.js";
import { emitTypes } from "./emit-types.js";
import { loadDocument } from "./load-document.js";
import { buildPlaneModel } from "./plane-model.js";

/**
 * Everything generated for one OpenAPI document, by file name (relative to `gen/openapi/<name>/`).
 * Pure: text in, text out, so the generator's tests need no file system and the output depends on
 * nothing but the document.
 */
export function generatePlane(name: string, source: string, text: string): Map<string, string> {
  const plane = buildPlaneModel(name, source, loadDocument(source, text));
  return new Map([
    ["types.ts", emitTypes(plane)],
    ["routes.ts", emitRoutes(plane)],
    ["schemas.ts", emitSchemas(plane)],
    ["handler.ts", emitHandler(plane)],
    ["client.ts", emitClient(plane)],
  ]);
}
