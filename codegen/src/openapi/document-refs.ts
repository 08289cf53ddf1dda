import type { OpenAPIObject, ReferenceObject } from "openapi3-ts/oas31";
import { GenerationError } from "../generation-error.js";

/** Component kinds whose entries a document may reference instead of writing inline. */
export type ComponentKind = "parameters" | "responses" | "requestBodies" | "headers";

export function isReference(value: unknown): value is ReferenceObject {
  return typeof value === "object" && value !== null && typeof (value as { $ref?: unknown }).$ref === "string";
}

/** Follows `$ref`s to a component of `kind` until the object itself; `where` names the referrer in errors. */
export function resolveComponent<T extends object>(
  doc: OpenAPIObject,
  value: T | ReferenceObject,
  kind: ComponentKind,
  where: string,
): T {
  const seen = new Set<string>();
  let current: T | ReferenceObject = value;
  while (isReference(current)) {
    const ref: string = current.$ref;
    const prefix = `#/components/${kind}/`;
    if (!ref.startsWith(prefix))
      throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} must point into ${prefix}`);
    if (seen.has(ref)) throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} refers to itself`);
    seen.add(ref);
    const entries = doc.components?.[kind] as Record<string, T | ReferenceObject> | undefined;
    const next = entries?.[ref.slice(prefix.length)];
    if (next === undefined) throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} names no component`);
    current = next;
  }
  return current;
}

const SCHEMA_PREFIX = "#/components/schemas/";

/**
 * The component name a schema `$ref` points to. Only whole component schemas can be referenced:
 * each becomes a named type and a `$defs` entry, and a pointer into one has neither.
 */
export function schemaRefName(doc: OpenAPIObject, ref: string, where: string): string {
  const name = ref.startsWith(SCHEMA_PREFIX) ? ref.slice(SCHEMA_PREFIX.length) : undefined;
  if (name === undefined || name.includes("/")) {
    throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} must name a schema in ${SCHEMA_PREFIX}`);
  }
  if (doc.components?.schemas?.[name] === undefined)
    throw new GenerationError(`${where}: $ref ${JSON.stringify(ref)} names no schema`);
  return name;
}
