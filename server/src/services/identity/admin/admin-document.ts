import { createComponentValidator } from "@platform/codegen/runtime/server";
import { IdentityAdminValidation } from "../../../../../gen/openapi/identity-admin/schemas.js";
import type { JsonObject } from "../identity-schema.js";
import { parseJsonDocument } from "../json-document.js";

const components = createComponentValidator(IdentityAdminValidation);

/** The component schema each document field of the admin API is checked against (its `contentSchema`). */
export type DocumentSchema = "PoolPolicies" | "PoolSettings" | "BrandingDocument" | "RoleCatalog";

/**
 * Reads a `*Json` field of a request body: a JSON object as a string, checked against its
 * document's schema when it has one, so a bad member is refused naming it
 * (`body.settingsJson.redirect_uris[0]: must be a URI`) instead of being stored and ignored.
 */
export function readAdminDocument(field: string, text: string, schema?: DocumentSchema): JsonObject {
  const document = parseJsonDocument(`body.${field}`, text);
  if (schema) components.check(schema, document, `body.${field}`);
  return document;
}
