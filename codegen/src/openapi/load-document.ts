import type { OpenAPIObject } from "openapi3-ts/oas31";
import { parse } from "yaml";
import { GenerationError } from "../generation-error.js";

/**
 * Parses an OpenAPI document from YAML (JSON is YAML too). Only the outline is checked here:
 * the plane model checks every part it reads, with the path to it in the message.
 */
export function loadDocument(source: string, text: string): OpenAPIObject {
  let value: unknown;
  try {
    // Duplicate keys are errors: in a contract, the second one silently winning is a bug.
    value = parse(text, { uniqueKeys: true });
  } catch (error) {
    throw new GenerationError(`${source}: not valid YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GenerationError(`${source}: the document must be an object`);
  }
  const doc = value as Record<string, unknown>;
  if (typeof doc.openapi !== "string" || !/^3\.1\.\d+$/.test(doc.openapi)) {
    throw new GenerationError(`${source}: openapi must be 3.1.x, found ${JSON.stringify(doc.openapi)}`);
  }
  if (typeof doc.paths !== "object" || doc.paths === null) {
    throw new GenerationError(`${source}: the document has no paths`);
  }
  // The outline is checked; the parts are typed by openapi3-ts and checked where they are read.
  return value as OpenAPIObject;
}
