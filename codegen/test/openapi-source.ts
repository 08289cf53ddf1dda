import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import formatsPlugin from "ajv-formats";
import type { OpenAPIObject, OperationObject, PathItemObject } from "openapi3-ts/oas31";

/** The hand-written OpenAPI documents of the REST-only planes, as tests read them. */
export const openApiSourceDir = join(dirname(fileURLToPath(import.meta.url)), "../../openapi");

export async function openApiSourceNames(): Promise<string[]> {
  return (await readdir(openApiSourceDir)).filter((name) => /\.ya?ml$/.test(name)).sort();
}

export interface OpenApiSource {
  readonly name: string;
  readonly doc: OpenAPIObject;
  /** The validator's verdict against the official OpenAPI schema of the document's version. */
  readonly valid: boolean;
  readonly errors: unknown;
  readonly version: string;
}

/**
 * Parses and validates one document. The text goes to the validator itself so that its YAML
 * parser, which refuses duplicate keys, is the one that reads the file.
 */
export async function loadOpenApiSource(name: string): Promise<OpenApiSource> {
  const validator = new Validator();
  const result = await validator.validate(await readFile(join(openApiSourceDir, name), "utf8"));
  // A text that does not parse leaves no specification; an empty one lets the validity test report why.
  const doc = (validator.specification ?? {}) as unknown as OpenAPIObject;
  return { name, doc, valid: result.valid, errors: result.errors, version: validator.version };
}

export interface SourceOperation {
  readonly path: string;
  readonly method: string;
  readonly pathItem: PathItemObject;
  readonly op: OperationObject & Record<`x-${string}`, unknown>;
}

const httpMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export function operationsOf(doc: OpenAPIObject): SourceOperation[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, pathItem]) =>
    httpMethods
      .filter((method) => pathItem[method])
      .map((method) => ({ path, method, pathItem, op: pathItem[method]! })),
  );
}

/** Follows a local `$ref` (`#/components/...`) to what it names; other values come back as they are. */
export function resolveRef<T>(doc: OpenAPIObject, value: T | { $ref: string }): T {
  if (typeof value !== "object" || value === null || !("$ref" in value)) return value as T;
  const segments = value.$ref
    .replace(/^#\//, "")
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  let target: unknown = doc;
  for (const segment of segments) target = (target as Record<string, unknown> | undefined)?.[segment];
  return target as T;
}

const componentsId = "urn:openapi:components";

/**
 * An ajv with the document's component schemas loaded, in the strict 2020-12 mode the generated
 * request validation uses, so a schema it cannot compile fails here first.
 */
export function schemaCompilerFor(doc: OpenAPIObject): (schema: object) => ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  formatsPlugin.default(ajv);
  const pointAtDefs = (schema: object): object =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${componentsId}#/$defs/`));
  ajv.addSchema({ $id: componentsId, $defs: pointAtDefs(doc.components?.schemas ?? {}) });
  return (schema) => ajv.compile(pointAtDefs(schema));
}
