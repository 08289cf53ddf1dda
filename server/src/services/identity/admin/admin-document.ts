import { createComponentValidator, InvalidRequestError } from "@platform/codegen/runtime/server";
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
  if (schema) {
    components.check(schema, document, `body.${field}`);
    checkUrls({ $ref: `#/$defs/${schema}` }, document, `body.${field}`);
  }
  return document;
}

type SchemaNode = Readonly<Record<string, unknown>>;

/**
 * The `uri` format checks the syntax of RFC 3986, which takes `https://x.example:99999/` (a port is
 * any digits there); the hosted pages and redirects parse their URLs as browsers do (the WHATWG URL
 * standard), where that port does not exist. So every `uri` member of a document must also parse
 * that way before it is stored.
 */
function checkUrls(schema: SchemaNode, value: unknown, field: string): void {
  const ref = typeof schema.$ref === "string" ? /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1] : undefined;
  if (ref !== undefined) return checkUrls(IdentityAdminValidation.$defs[ref] as SchemaNode, value, field);
  if (schema.format === "uri" && typeof value === "string" && !URL.canParse(value)) {
    throw new InvalidRequestError(field, "must be a URL a browser can open (its host and port must exist)");
  }
  if (Array.isArray(value) && typeof schema.items === "object" && schema.items !== null) {
    value.forEach((item, index) => checkUrls(schema.items as SchemaNode, item, `${field}[${index}]`));
  } else if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const properties = (schema.properties ?? {}) as Readonly<Record<string, SchemaNode>>;
    const rest =
      typeof schema.additionalProperties === "object" && schema.additionalProperties !== null
        ? (schema.additionalProperties as SchemaNode)
        : undefined;
    for (const [key, member] of Object.entries(value)) {
      const memberSchema = properties[key] ?? rest;
      if (memberSchema) checkUrls(memberSchema, member, `${field}.${key}`);
    }
  }
}
