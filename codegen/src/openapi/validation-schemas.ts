import type { OpenAPIObject } from "openapi3-ts/oas31";
import { bodySchemaKey, parametersSchemaKey, type RestValidationSchemas } from "../../runtime/rest/rest-plane.js";
import { GenerationError } from "../generation-error.js";
import type { OperationModel, ParameterModel } from "./operation-model.js";
import type { PlaneModel } from "./plane-model.js";

/** Keywords whose value is one schema, an array of schemas, or a map of name to schema. */
const ONE_SCHEMA = [
  "items",
  "contains",
  "not",
  "if",
  "then",
  "else",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "propertyNames",
];
const SCHEMA_LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SCHEMA_MAP = ["properties", "patternProperties", "dependentSchemas", "$defs"];

/**
 * Keywords that only annotate. They are dropped so the server's ajv can stay strict about unknown
 * keywords: a typo in a validation keyword then stops the start instead of validating nothing.
 * `discriminator` goes too: OpenAPI's form carries a `mapping` ajv does not take; ajv's own form
 * is added back where it fits (see `discriminate`). The content keywords describe a string's
 * content, which the handler checks.
 */
const ANNOTATIONS = new Set([
  "description",
  "title",
  "example",
  "examples",
  "externalDocs",
  "xml",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$comment",
  "discriminator",
  "contentMediaType",
  "contentEncoding",
  "contentSchema",
]);

/**
 * The document the server validates requests with: every component schema, and per operation an
 * object schema of its parameters (`path`, `query`, `headers`) and its body schema, all under
 * `$defs` with `$ref`s rewritten to point there.
 */
export function buildValidationSchemas(plane: PlaneModel): RestValidationSchemas {
  const { doc } = plane;
  const defs: Record<string, object | boolean> = {};
  for (const { name, schema } of plane.components) defs[name] = clean(doc, schema, `schema ${name}`, false);
  for (const op of plane.operations) {
    const where = `${op.httpMethod} ${op.path} (${op.operationId})`;
    const parameters = parametersSchema(doc, op, where);
    if (parameters) defs[parametersSchemaKey(op.operationId)] = parameters;
    if (op.requestBody)
      defs[bodySchemaKey(op.operationId)] = clean(doc, op.requestBody.schema, `${where} body`, false) as object;
  }
  return { $id: `urn:platform:openapi:${plane.name}`, $defs: defs };
}

function parametersSchema(doc: OpenAPIObject, op: OperationModel, where: string): object | undefined {
  if (op.parameters.length === 0) return undefined;
  const properties: Record<string, object> = {};
  for (const place of ["path", "query", "header"] as const) {
    const list = op.parameters.filter((p) => p.in === place);
    if (list.length === 0) continue;
    properties[place === "header" ? "headers" : place] = objectOf(doc, list, where);
  }
  return { type: "object", properties };
}

function objectOf(doc: OpenAPIObject, parameters: readonly ParameterModel[], where: string): object {
  const required = parameters.filter((p) => p.required).map((p) => p.name);
  const properties = Object.fromEntries(
    parameters.map((p) => {
      const schema = clean(doc, p.schema, `${where} parameter ${p.name}`, true);
      // A default inside a referenced schema is out of ajv's reach: give it beside the reference.
      return [
        p.name,
        p.defaultValue === undefined || typeof schema !== "object" ? schema : { ...schema, default: p.defaultValue },
      ];
    }),
  );
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * A copy of a schema without annotations, with `$ref`s into `$defs`, and with a discriminator on
 * each `oneOf` whose branches a property tells apart. `default` is kept only where ajv applies it
 * (a property of an object), since elsewhere strict ajv refuses it.
 */
function clean(doc: OpenAPIObject, schema: unknown, where: string, isProperty: boolean): object | boolean {
  if (typeof schema === "boolean") return schema;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw new GenerationError(`${where}: a schema must be an object or a boolean`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key) || key.startsWith("x-")) continue;
    if (key === "default" && !isProperty) continue;
    if (key === "$ref") out.$ref = rewriteRef(value, where);
    else if (ONE_SCHEMA.includes(key)) out[key] = clean(doc, value, `${where}.${key}`, false);
    else if (SCHEMA_LIST.includes(key))
      out[key] = (value as unknown[]).map((sub, i) => clean(doc, sub, `${where}.${key}[${i}]`, false));
    else if (SCHEMA_MAP.includes(key)) {
      const entries = Object.entries(value as Record<string, unknown>);
      out[key] = Object.fromEntries(
        entries.map(([name, sub]) => [name, clean(doc, sub, `${where}.${name}`, key === "properties")]),
      );
    } else out[key] = value;
  }
  if (Array.isArray(out.oneOf)) {
    const tag = discriminate(doc, schema as Record<string, unknown>);
    // ajv's discriminator lets anything that is not an object through without looking at the
    // branches, so the union must say it takes objects only.
    if (tag !== undefined) Object.assign(out, { type: out.type ?? "object", discriminator: { propertyName: tag } });
  }
  return out;
}

function rewriteRef(ref: unknown, where: string): string {
  const prefix = "#/components/schemas/";
  if (typeof ref !== "string" || !ref.startsWith(prefix))
    throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} must name a schema in ${prefix}`);
  return `#/$defs/${ref.slice(prefix.length)}`;
}

/**
 * The property that tells a `oneOf`'s branches apart, when there is one: every branch declares it
 * with a `const` or `enum`, requires it (or the union does), and no value belongs to two branches.
 * ajv then validates only the branch the value names, so an error names a field of that branch
 * instead of a guess across all of them.
 */
function discriminate(doc: OpenAPIObject, schema: Record<string, unknown>): string | undefined {
  const branches = (schema.oneOf as unknown[]).map((branch) => resolve(doc, branch));
  const first = branches[0];
  if (!first || branches.some((b) => b === undefined)) return undefined;
  const unionRequired = new Set((schema.required as string[] | undefined) ?? []);
  for (const candidate of Object.keys((first.properties as object | undefined) ?? {})) {
    const values: unknown[] = [];
    const fits = branches.every((branch) => {
      const property = (branch!.properties as Record<string, Record<string, unknown>> | undefined)?.[candidate];
      if (typeof property !== "object" || property === null) return false;
      const own = "const" in property ? [property.const] : Array.isArray(property.enum) ? property.enum : undefined;
      if (!own || own.some((v) => typeof v !== "string" || values.includes(v))) return false;
      values.push(...own);
      return unionRequired.has(candidate) || ((branch!.required as string[] | undefined) ?? []).includes(candidate);
    });
    if (fits) return candidate;
  }
  return undefined;
}

function resolve(doc: OpenAPIObject, schema: unknown): Record<string, unknown> | undefined {
  let current = schema;
  for (let depth = 0; depth < 32 && typeof current === "object" && current !== null && "$ref" in current; depth++) {
    const ref = String((current as { $ref: unknown }).$ref);
    current = doc.components?.schemas?.[ref.replace("#/components/schemas/", "")];
  }
  return typeof current === "object" && current !== null ? (current as Record<string, unknown>) : undefined;
}
