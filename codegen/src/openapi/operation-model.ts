import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from "openapi3-ts/oas31";
import { parsePathTemplate, type PathTemplate } from "../../runtime/path-template/index.js";
import type { ErrorBodyForm, RestAuth } from "../../runtime/rest/rest-plane.js";
import { GenerationError } from "../generation-error.js";
import { isReference, resolveComponent, schemaRefName } from "./document-refs.js";
import { errorFormsOf } from "./error-forms.js";
import { pascalCase } from "./ts-syntax.js";

/** A schema as a document writes it: inline, a `$ref`, or a boolean schema. */
export type SchemaLike = SchemaObject | ReferenceObject | boolean;

/**
 * One operation, read once and checked once; every emitter reads this and never the document,
 * so a rule about operations lives here only.
 */
export interface OperationModel {
  readonly operationId: string;
  /** `createPool` as a type name prefix: `CreatePool`. */
  readonly typeName: string;
  readonly httpMethod: string;
  /** The path as the document writes it. */
  readonly path: string;
  readonly template: PathTemplate;
  readonly summary: string;
  readonly description: string | undefined;
  readonly deprecated: boolean;
  readonly auth: RestAuth;
  readonly rateLimit: "credential" | undefined;
  readonly handlerValidation: boolean;
  readonly parameters: readonly ParameterModel[];
  readonly requestBody: RequestBodyModel | undefined;
  readonly responses: readonly ResponseModel[];
  readonly errorBody: readonly ErrorBodyForm[];
}

export interface ParameterModel {
  /** Lower case for a header, since header names are case-insensitive. */
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly required: boolean;
  readonly schema: SchemaLike;
  readonly description: string | undefined;
  readonly deprecated: boolean;
  /** A query parameter whose schema is an array: `?role=a&role=b`. */
  readonly repeated: boolean;
  /** Its schema's default, which the server fills in when the parameter is absent. */
  readonly defaultValue: unknown;
}

export interface RequestBodyModel {
  readonly required: boolean;
  readonly contentTypes: readonly string[];
  /** One schema for every media type: a body means the same whichever way it is encoded. */
  readonly schema: SchemaLike;
  readonly description: string | undefined;
}

export interface ResponseModel {
  readonly status: number | "default";
  readonly description: string;
  readonly contents: readonly { readonly mediaType: string; readonly schema: SchemaLike }[];
  readonly headers: readonly HeaderModel[];
}

export interface HeaderModel {
  /** Lower case. */
  readonly name: string;
  readonly required: boolean;
  readonly schema: SchemaLike;
  readonly description: string | undefined;
  readonly numeric: boolean;
}

const AUTH_VALUES: readonly RestAuth[] = ["none", "pool-bearer", "platform-bearer"];

export function buildOperationModel(
  doc: OpenAPIObject,
  path: string,
  method: string,
  pathItem: PathItemObject,
  op: OperationObject,
): OperationModel {
  const httpMethod = method.toUpperCase();
  let where = `${httpMethod} ${path}`;
  const operationId = op.operationId;
  if (typeof operationId !== "string" || !/^[a-z][A-Za-z0-9]*$/.test(operationId)) {
    throw new GenerationError(`${where}: operationId must be lowerCamelCase, found ${JSON.stringify(operationId)}`);
  }
  where = `${where} (${operationId})`;
  if (op.tags?.length !== 1) throw new GenerationError(`${where}: needs exactly one tag, naming its plane`);
  if (typeof op.summary !== "string" || op.summary.trim() === "")
    throw new GenerationError(`${where}: needs a summary`);
  const auth = op["x-platform-auth"] as unknown;
  if (!AUTH_VALUES.includes(auth as RestAuth)) {
    throw new GenerationError(
      `${where}: x-platform-auth must be one of ${AUTH_VALUES.join(", ")}, found ${JSON.stringify(auth)}`,
    );
  }
  const rateLimit = op["x-platform-rate-limit"] as unknown;
  if (rateLimit !== undefined && rateLimit !== "credential") {
    throw new GenerationError(
      `${where}: x-platform-rate-limit must be "credential", found ${JSON.stringify(rateLimit)}`,
    );
  }
  const validation = op["x-platform-validation"] as unknown;
  if (validation !== undefined && validation !== "handler") {
    throw new GenerationError(`${where}: x-platform-validation must be "handler", found ${JSON.stringify(validation)}`);
  }
  let template: PathTemplate;
  try {
    template = parsePathTemplate(path);
  } catch (error) {
    throw new GenerationError(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parameters = parametersOf(doc, pathItem, op, where);
  const declared = parameters
    .filter((p) => p.in === "path")
    .map((p) => p.name)
    .sort();
  const templated = template.variables.map((v) => v.fieldPath).sort();
  if (declared.join() !== templated.join()) {
    throw new GenerationError(
      `${where}: path parameters [${declared.join(", ")}] must be exactly the template's [${templated.join(", ")}]`,
    );
  }
  const requestBody = op.requestBody === undefined ? undefined : requestBodyOf(doc, op.requestBody, where);
  if (requestBody && (httpMethod === "GET" || httpMethod === "HEAD"))
    throw new GenerationError(`${where}: a ${httpMethod} cannot have a request body`);
  const responses = responsesOf(doc, op, where);
  return {
    operationId,
    typeName: pascalCase(operationId),
    httpMethod,
    path,
    template,
    summary: op.summary.trim(),
    description: op.description?.trim() || undefined,
    deprecated: op.deprecated === true,
    auth: auth as RestAuth,
    rateLimit: rateLimit === undefined ? undefined : "credential",
    handlerValidation: validation === "handler",
    parameters,
    requestBody,
    responses,
    errorBody: errorFormsOf(doc, responses, where),
  };
}

/** The path item's parameters, then the operation's, which replace any of the same name and place. */
function parametersOf(
  doc: OpenAPIObject,
  pathItem: PathItemObject,
  op: OperationObject,
  where: string,
): ParameterModel[] {
  const byKey = new Map<string, ParameterModel>();
  for (const raw of [...(pathItem.parameters ?? []), ...(op.parameters ?? [])]) {
    const parameter = resolveComponent<ParameterObject>(doc, raw, "parameters", where);
    const model = parameterOf(doc, parameter, `${where} parameter ${JSON.stringify(parameter.name)}`);
    byKey.set(`${model.in}:${model.name}`, model);
  }
  return [...byKey.values()];
}

function parameterOf(doc: OpenAPIObject, parameter: ParameterObject, where: string): ParameterModel {
  const place = parameter.in;
  if (place !== "path" && place !== "query" && place !== "header")
    throw new GenerationError(`${where}: parameters in ${String(place)} are not supported`);
  if (parameter.schema === undefined) throw new GenerationError(`${where}: needs a schema (content is not supported)`);
  const defaultStyle = place === "query" ? "form" : "simple";
  if (
    (parameter.style !== undefined && parameter.style !== defaultStyle) ||
    parameter.explode === (place !== "query")
  ) {
    throw new GenerationError(
      `${where}: only the default style (${defaultStyle}, explode ${place === "query"}) is supported`,
    );
  }
  if (place === "path" && parameter.required !== true)
    throw new GenerationError(`${where}: a path parameter must be required`);
  const resolved = resolveSchema(doc, parameter.schema, where);
  const types = typeof resolved === "object" ? [resolved.type].flat() : [];
  if (types.includes("array") && place !== "query")
    throw new GenerationError(`${where}: only query parameters may be arrays`);
  if (types.includes("object")) throw new GenerationError(`${where}: object parameters are not supported`);
  return {
    name: place === "header" ? parameter.name.toLowerCase() : parameter.name,
    in: place,
    required: parameter.required === true,
    schema: parameter.schema,
    description: parameter.description?.trim() || undefined,
    deprecated: parameter.deprecated === true,
    repeated: types.includes("array"),
    defaultValue:
      (parameter.schema as { default?: unknown }).default ??
      (typeof resolved === "object" ? resolved.default : undefined),
  };
}

function requestBodyOf(doc: OpenAPIObject, raw: RequestBodyObject | ReferenceObject, where: string): RequestBodyModel {
  const body = resolveComponent<RequestBodyObject>(doc, raw, "requestBodies", where);
  const entries = Object.entries(body.content ?? {});
  if (entries.length === 0) throw new GenerationError(`${where}: the request body lists no media type`);
  const first = JSON.stringify(entries[0]![1].schema);
  for (const [mediaType, media] of entries) {
    if (media.schema === undefined) throw new GenerationError(`${where}: request body ${mediaType} needs a schema`);
    if (JSON.stringify(media.schema) !== first)
      throw new GenerationError(`${where}: every media type of the request body must have the same schema`);
  }
  return {
    required: body.required === true,
    contentTypes: entries.map(([mediaType]) => mediaType.toLowerCase()),
    schema: entries[0]![1].schema!,
    description: body.description?.trim() || undefined,
  };
}

function responsesOf(doc: OpenAPIObject, op: OperationObject, where: string): ResponseModel[] {
  const entries = Object.entries((op.responses ?? {}) as Record<string, ResponseObject | ReferenceObject>);
  if (entries.length === 0) throw new GenerationError(`${where}: documents no response`);
  return entries.map(([key, raw]) => {
    if (key !== "default" && !/^[1-5][0-9][0-9]$/.test(key))
      throw new GenerationError(`${where}: response ${key} must be a status code or default`);
    const at = `${where} response ${key}`;
    const response = resolveComponent<ResponseObject>(doc, raw, "responses", at);
    const contents = Object.entries(response.content ?? {}).map(([mediaType, media]) => {
      if (media.schema === undefined) throw new GenerationError(`${at}: ${mediaType} needs a schema`);
      return { mediaType: mediaType.toLowerCase(), schema: media.schema };
    });
    const headers = Object.entries(response.headers ?? {}).map(([name, rawHeader]) => {
      const header = resolveComponent<HeaderObject>(doc, rawHeader, "headers", `${at} header ${name}`);
      if (header.schema === undefined) throw new GenerationError(`${at} header ${name}: needs a schema`);
      const resolved = resolveSchema(doc, header.schema, `${at} header ${name}`);
      const types = typeof resolved === "object" ? [resolved.type].flat() : [];
      return {
        name: name.toLowerCase(),
        required: header.required === true,
        schema: header.schema,
        description: header.description?.trim() || undefined,
        numeric: types.includes("integer") || types.includes("number"),
      };
    });
    return {
      status: key === "default" ? "default" : Number(key),
      description: response.description ?? "",
      contents,
      headers,
    };
  });
}

/** A schema with its `$ref`s followed, for the few facts read from it here (type, default). */
function resolveSchema(doc: OpenAPIObject, schema: SchemaLike, where: string): SchemaObject | boolean {
  let current: SchemaLike = schema;
  for (let depth = 0; isReference(current); depth++) {
    if (depth > 32) throw new GenerationError(`${where}: $ref chain too long`);
    const next: SchemaLike | undefined = doc.components?.schemas?.[schemaRefName(doc, current.$ref, where)];
    if (next === undefined) throw new GenerationError(`${where}: $ref ${current.$ref} names no schema`);
    current = next;
  }
  return current;
}
