import type { OpenAPIObject, SchemaObject } from "openapi3-ts/oas31";
import type { ErrorBodyForm } from "../../runtime/rest/rest-plane.js";
import { isTextMediaType, isJsonMediaType } from "../../runtime/rest/media-type.js";
import { GenerationError } from "../generation-error.js";
import { isReference, schemaRefName } from "./document-refs.js";
import type { ResponseModel } from "./operation-model.js";

/**
 * The shapes an operation's error responses (4xx, 5xx and `default`) take, read from their
 * schemas, in document order. The runtime writes its own errors (validation, routing, thrown
 * errors) in one of these, so a client parses every error of an operation the same way.
 */
export function errorFormsOf(doc: OpenAPIObject, responses: readonly ResponseModel[], where: string): ErrorBodyForm[] {
  const forms: ErrorBodyForm[] = [];
  for (const response of responses) {
    if (typeof response.status === "number" && response.status < 400) continue;
    for (const content of response.contents) {
      const form = formOf(
        doc,
        content.mediaType,
        content.schema,
        `${where} response ${response.status} ${content.mediaType}`,
      );
      if (!forms.includes(form)) forms.push(form);
    }
  }
  return forms;
}

function formOf(doc: OpenAPIObject, mediaType: string, schema: unknown, where: string): ErrorBodyForm {
  if (mediaType === "text/html") return "html";
  if (isTextMediaType(mediaType)) return "text";
  if (!isJsonMediaType(mediaType)) throw new GenerationError(`${where}: error bodies must be JSON, text or HTML`);
  const properties = new Set(Object.keys(objectSchemaOf(doc, schema, where)?.properties ?? {}));
  if (properties.has("error_description")) return "oauth";
  if (properties.has("error")) return "error";
  if (properties.has("code") && properties.has("message")) return "code-message";
  if (properties.has("message")) return "message";
  throw new GenerationError(
    `${where}: cannot tell how to write errors in this schema; give it an "error" (and "error_description"), or "code" and "message", or "message" property`,
  );
}

function objectSchemaOf(doc: OpenAPIObject, schema: unknown, where: string): SchemaObject | undefined {
  let current = schema;
  for (let depth = 0; isReference(current) && depth < 32; depth++) {
    current = doc.components?.schemas?.[schemaRefName(doc, current.$ref, where)];
  }
  return typeof current === "object" && current !== null ? (current as SchemaObject) : undefined;
}

/** The plane's shape for errors no operation is known for (404, 405): the JSON shape most operations use. */
export function planeErrorForm(forms: readonly (readonly ErrorBodyForm[])[]): ErrorBodyForm {
  const counts = new Map<ErrorBodyForm, number>();
  for (const list of forms) {
    const form = list.find((f) => f !== "html" && f !== "text") ?? list[0];
    if (form !== undefined) counts.set(form, (counts.get(form) ?? 0) + 1);
  }
  let best: ErrorBodyForm = "error";
  let bestCount = 0;
  // Map iteration is insertion order, so a tie goes to the form met first.
  for (const [form, count] of counts) {
    if (count > bestCount) [best, bestCount] = [form, count];
  }
  return best;
}
