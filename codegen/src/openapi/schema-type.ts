import type { OpenAPIObject, SchemaObject } from "openapi3-ts/oas31";
import { GenerationError } from "../generation-error.js";
import { isReference, schemaRefName } from "./document-refs.js";
import type { SchemaLike } from "./operation-model.js";
import { jsDoc } from "../printer/ts-file.js";
import { literal, propertyKey } from "./ts-syntax.js";

/**
 * Prints the TypeScript type of a JSON Schema (2020-12, as OpenAPI 3.1 uses it): a component
 * `$ref` is the component's type name, `const` and `enum` are literal types, `type` lists are
 * unions (`["string", "null"]` is `string | null`), `oneOf`/`anyOf` unions, `allOf` intersections,
 * and objects list their properties, optional unless required, with their descriptions.
 *
 * An object's `additionalProperties` becomes an index signature only without declared properties
 * (`Record<string, T>`); beside properties it would have to admit every property's type too, which
 * says less than the properties do.
 */
export function schemaType(doc: OpenAPIObject, schema: SchemaLike | undefined, where: string, indent = ""): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (isReference(schema)) return schemaRefName(doc, schema.$ref, where);
  const parts: string[] = [];
  const own = ownType(doc, schema, where, indent);
  if (own !== undefined) parts.push(own);
  for (const sub of schema.allOf ?? []) parts.push(schemaType(doc, sub, where, indent));
  const union = schema.oneOf ?? schema.anyOf;
  if (union) parts.push(union.map((sub) => group(schemaType(doc, sub, where, indent))).join(" | "));
  if (parts.length === 0) return "unknown";
  return parts.length === 1 ? parts[0]! : parts.map(group).join(" & ");
}

/** The type from the schema's own keywords (const, enum, type, properties), or undefined when it has none. */
function ownType(doc: OpenAPIObject, schema: SchemaObject, where: string, indent: string): string | undefined {
  if (schema.const !== undefined) return literalType(schema.const);
  if (schema.enum !== undefined) return schema.enum.map(literalType).join(" | ");
  const types = [schema.type].flat().filter((t) => t !== undefined);
  if (types.length === 0) {
    const objectLike = schema.properties !== undefined || schema.additionalProperties !== undefined;
    if (objectLike) return objectType(doc, schema, where, indent);
    return schema.items !== undefined ? arrayType(doc, schema, where, indent) : undefined;
  }
  return types
    .map((type) => {
      switch (type) {
        case "string":
          return "string";
        case "integer":
        case "number":
          return "number";
        case "boolean":
          return "boolean";
        case "null":
          return "null";
        case "array":
          return arrayType(doc, schema, where, indent);
        case "object":
          return objectType(doc, schema, where, indent);
        default:
          throw new GenerationError(`${where}: unknown schema type ${JSON.stringify(type)}`);
      }
    })
    .join(" | ");
}

function arrayType(doc: OpenAPIObject, schema: SchemaObject, where: string, indent: string): string {
  const item = schemaType(doc, schema.items as SchemaLike | undefined, where, indent);
  return /^[A-Za-z0-9_]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
}

function objectType(doc: OpenAPIObject, schema: SchemaObject, where: string, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties as SchemaLike | undefined;
  if (properties.length === 0) {
    if (extra === false) return "Record<string, never>";
    return `Record<string, ${schemaType(doc, extra, where, indent)}>`;
  }
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = properties.map(([name, property]) => {
    const doc_ = propertyDoc(property as SchemaLike);
    const optional = required.has(name) ? "" : "?";
    return `${jsDoc(doc_, inner)}${inner}${propertyKey(name)}${optional}: ${schemaType(doc, property as SchemaLike, `${where}.${name}`, inner)};\n`;
  });
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: unknown;\n`);
  return `{\n${lines.join("")}${indent}}`;
}

/** A property's description, and `@deprecated` when it is. A `$ref` may carry both beside it (3.1). */
function propertyDoc(schema: SchemaLike): string | undefined {
  if (typeof schema !== "object") return undefined;
  const { description, deprecated } = schema as { description?: string; deprecated?: boolean };
  const lines = [description?.trim(), deprecated ? "@deprecated" : undefined].filter(
    (l) => l !== undefined && l !== "",
  );
  return lines.length === 0 ? undefined : lines.join("\n\n");
}

function literalType(value: unknown): string {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean" || value === null)
    return literal(value);
  // An object or array constant has no literal type; its shape is still checked by the server.
  return "unknown";
}

/** Parenthesises a union or intersection so it can be an operand. */
function group(type: string): string {
  return /^[^{]*[|&]/.test(type) ? `(${type})` : type;
}
