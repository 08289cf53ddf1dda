import type { OpenAPIObject, OperationObject, PathItemObject } from "openapi3-ts/oas31";
import {
  findAmbiguousRoutes,
  formatPathTemplate,
  parsePathTemplate,
  type PathTemplate,
} from "../../runtime/path-template/index.js";
import type { ErrorBodyForm } from "../../runtime/rest/rest-plane.js";
import { GenerationError } from "../generation-error.js";
import { planeErrorForm } from "./error-forms.js";
import { buildOperationModel, type OperationModel, type SchemaLike } from "./operation-model.js";
import { pascalCase } from "./ts-syntax.js";

/** One plane (one OpenAPI document), as every emitter reads it. */
export interface PlaneModel {
  /** The document's file name without extension: `identity-admin`. */
  readonly name: string;
  /** `IdentityAdmin`, the prefix of the plane's generated names. */
  readonly typeName: string;
  /** Where the document is, for generated headers. */
  readonly source: string;
  readonly title: string;
  readonly doc: OpenAPIObject;
  /** The path part of the document's server URL (`/v1/identity`, `/{org}/{pool}`), or `/`. */
  readonly basePath: PathTemplate;
  /** The variables of the base path, with their descriptions. */
  readonly serverVariables: readonly { readonly name: string; readonly description: string | undefined }[];
  readonly components: readonly { readonly name: string; readonly schema: SchemaLike }[];
  readonly operations: readonly OperationModel[];
  readonly errorBody: ErrorBodyForm;
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

export function buildPlaneModel(name: string, source: string, doc: OpenAPIObject): PlaneModel {
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name))
    throw new GenerationError(`${source}: the file name must be kebab-case`);
  const components = Object.entries(doc.components?.schemas ?? {}).map(([componentName, schema]) => {
    if (!/^[A-Z][A-Za-z0-9]*$/.test(componentName)) {
      throw new GenerationError(`${source}: schema ${JSON.stringify(componentName)} must have a PascalCase name`);
    }
    return { name: componentName, schema: schema as SchemaLike };
  });
  const operations: OperationModel[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const pathItem = item as PathItemObject;
    if (pathItem.$ref !== undefined) throw new GenerationError(`${source} ${path}: path item $refs are not supported`);
    for (const method of METHODS) {
      const op = pathItem[method] as OperationObject | undefined;
      if (op) operations.push(buildOperationModel(doc, path, method, pathItem, op));
    }
  }
  if (operations.length === 0) throw new GenerationError(`${source}: the document has no operations`);
  checkUnique(
    source,
    operations,
    components.map((c) => c.name),
  );
  rejectAmbiguousRoutes(source, operations);
  const { basePath, serverVariables } = basePathOf(source, doc);
  return {
    name,
    typeName: pascalCase(name),
    source,
    title: doc.info?.title ?? name,
    doc,
    basePath,
    serverVariables,
    components,
    operations,
    errorBody: planeErrorForm(operations.map((op) => op.errorBody)),
  };
}

/** Suffixes of the types generated per operation; a component of the same name would collide. */
export const OPERATION_TYPE_SUFFIXES = [
  "PathParams",
  "QueryParams",
  "HeaderParams",
  "RequestBody",
  "Call",
  "Input",
  "Result",
  "Success",
] as const;

function checkUnique(source: string, operations: readonly OperationModel[], componentNames: readonly string[]): void {
  const seen = new Map<string, string>();
  for (const op of operations) {
    const previous = seen.get(op.operationId);
    if (previous)
      throw new GenerationError(
        `${source}: operationId ${op.operationId} is used by ${previous} and ${op.httpMethod} ${op.path}`,
      );
    seen.set(op.operationId, `${op.httpMethod} ${op.path}`);
  }
  const components = new Set(componentNames);
  for (const op of operations) {
    for (const suffix of OPERATION_TYPE_SUFFIXES) {
      if (components.has(`${op.typeName}${suffix}`)) {
        throw new GenerationError(
          `${source}: schema ${op.typeName}${suffix} has the name of a type generated for operation ${op.operationId}; rename the schema`,
        );
      }
    }
  }
}

function rejectAmbiguousRoutes(source: string, operations: readonly OperationModel[]): void {
  const pairs = findAmbiguousRoutes(
    operations.map((op) => ({ httpMethod: op.httpMethod, template: op.template, target: op.operationId })),
  );
  if (pairs.length > 0) {
    const lines = pairs.map(
      ([a, b]) =>
        `${a.httpMethod} ${formatPathTemplate(a.template)} (${a.target}) and ${b.httpMethod} ${formatPathTemplate(b.template)} (${b.target})`,
    );
    throw new GenerationError(`${source}: ambiguous routes:\n  ${lines.join("\n  ")}`);
  }
}

/**
 * The base path is the server URL after its origin: `{identity_url}/{org}/{pool}` has the origin
 * variable `identity_url` and the base path `/{org}/{pool}`, whose variables the caller supplies
 * (the server reads them from the request path, the SDK takes them as options).
 */
function basePathOf(source: string, doc: OpenAPIObject): Pick<PlaneModel, "basePath" | "serverVariables"> {
  const server = doc.servers?.[0];
  if (!server) return { basePath: parsePathTemplate("/"), serverVariables: [] };
  const origin = /^(\{[^}]+\}|[a-z][a-z0-9+.-]*:\/\/[^/]*)/i.exec(server.url)?.[0] ?? "";
  const rest = server.url.slice(origin.length).replace(/\/+$/, "");
  let basePath: PathTemplate;
  try {
    basePath = parsePathTemplate(rest === "" ? "/" : rest);
  } catch (error) {
    throw new GenerationError(
      `${source}: server URL ${JSON.stringify(server.url)}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const serverVariables = basePath.variables.map(({ fieldPath }) => {
    const variable = server.variables?.[fieldPath];
    if (!variable)
      throw new GenerationError(
        `${source}: server URL variable {${fieldPath}} is not declared in servers[0].variables`,
      );
    return { name: fieldPath, description: variable.description?.trim() || undefined };
  });
  return { basePath, serverVariables };
}
