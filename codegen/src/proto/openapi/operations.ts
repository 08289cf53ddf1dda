import type { DescField, DescMessage } from "@bufbuild/protobuf";
import type { OperationObject, ParameterObject, ReferenceObject, SchemaObject } from "openapi3-ts/oas31";
import type { HttpRoute } from "../../../runtime/http-route.js";
import { toOpenApiPath } from "../../../runtime/path-template/index.js";
import { resolveFieldPath, type MethodModel, type ServiceModel } from "../binding-model.js";
import { publicComment } from "../public-comment.js";
import { FieldBehavior, type OptionReader } from "../options.js";
import { scalarSchema, wellKnownSchema, type SchemaCollector } from "./message-schemas.js";
import { jsonPathOf } from "../stream-error-event.js";
import { foldedStreamDescription, streamContent, streamDescription } from "./stream-content.js";

/** Nesting depth of message fields expanded into dotted query parameters (recursive messages stop here). */
const MAX_QUERY_DEPTH = 3;

export interface OpenApiOperation {
  readonly path: string;
  readonly httpMethod: string;
  readonly operation: OperationObject;
}

/** The OpenAPI operation of one HTTP route of one RPC. */
export function buildOperation(
  service: ServiceModel,
  method: MethodModel,
  route: HttpRoute,
  routeIndex: number,
  schemas: SchemaCollector,
  options: OptionReader,
): OpenApiOperation {
  const desc = method.method;
  const { path, parameters: pathParams } = toOpenApiPath(route.template);
  const parameters: ParameterObject[] = pathParams.map((p) => {
    const field = resolveFieldPath(desc.input, p.fieldPath);
    const base = field ? schemas.fieldSchema(field, "request") : { type: "string" as const };
    const description = [
      field ? publicComment(field) : "",
      p.pattern ? `Fills \`${p.fieldPath}\`, whose value is the path text matching \`${p.pattern}\`.` : "",
    ]
      .filter(Boolean)
      .join(" ");
    return {
      name: p.name,
      in: "path",
      required: true,
      schema: stripDocs(base),
      ...(description ? { description } : {}),
    };
  });
  const snake = route.queryCasing === "snake";
  for (const name of route.queryFields) {
    const field = desc.input.fields.find((f) => f.name === name);
    if (!field) continue;
    const own = queryParameters(field, "", 1, schemas, options, snake);
    if (route.queryEnumNumbers?.includes(name) && field.fieldKind === "enum") {
      for (const param of own) param.schema = enumNumberSchema(field.enum.values.map((v) => v.number));
    }
    parameters.push(...own);
    // An alias is one more name of the same field: documented beside it, never both at once.
    for (const alias of route.queryAliases ? options.queryParameter(field).aliases : []) {
      parameters.push({
        ...own[0]!,
        name: alias,
        required: false,
        description: `Alias of \`${own[0]!.name}\`: the same field under another name; give only one of the two.`,
      });
    }
  }

  const framing = route.streamFraming;
  const folded = method.streamErrorEvent
    ? { jsonPath: jsonPathOf(method.streamErrorEvent), member: method.streamErrorEvent[0]!.jsonName }
    : undefined;
  const streamDoc = !framing
    ? ""
    : folded
      ? foldedStreamDescription(framing, desc.output.name, folded)
      : streamDescription(framing, desc.output.name);
  const doc = [publicComment(desc), streamDoc].filter((text) => text !== "").join("\n\n");
  const operation: OperationObject = {
    operationId: `${service.service.name}_${desc.name}${routeIndex > 0 ? `_${routeIndex}` : ""}`,
    tags: [service.service.name],
    summary: desc.name,
    ...(doc !== "" ? { description: doc } : {}),
  };
  if (parameters.length > 0) operation.parameters = parameters;

  const requestSchema = requestBodySchema(desc.input, route, schemas);
  if (requestSchema) {
    operation.requestBody = { required: true, content: { "application/json": { schema: requestSchema } } };
  }

  const responseField =
    route.responseBody === "" ? undefined : desc.output.fields.find((f) => f.name === route.responseBody);
  const responseSchema = responseField
    ? schemas.fieldSchema(responseField, "response")
    : schemas.typeSchema(desc.output, "response");
  operation.responses = {
    "200": framing
      ? {
          description: `A stream of ${desc.output.name} frames; the schema is that of one frame.`,
          content: streamContent(framing, responseSchema, folded),
        }
      : { description: `The ${desc.output.name}.`, content: { "application/json": { schema: responseSchema } } },
    ...errorResponses(method),
  };
  operation.security = method.isPublic
    ? []
    : [service.organizationHeader ? { bearerAuth: [], organizationName: [] } : { bearerAuth: [] }];
  if (method.idempotency !== "unknown") operation["x-idempotency"] = method.idempotency;
  return { path, httpMethod: route.httpMethod.toLowerCase(), operation };
}

function requestBodySchema(
  input: DescMessage,
  route: HttpRoute,
  schemas: SchemaCollector,
): SchemaObject | ReferenceObject | undefined {
  if (route.body === "") return undefined;
  if (route.body !== "*") {
    const field = input.fields.find((f) => f.name === route.body);
    return field ? schemas.fieldSchema(field, "request") : undefined;
  }
  // Path variables win over the body, so they are left out of the body's schema.
  const pathFields = new Set(route.template.variables.map((v) => v.fieldPath).filter((p) => !p.includes(".")));
  return pathFields.size === 0 ? schemas.typeSchema(input, "request") : schemas.requestSchemaWithout(input, pathFields);
}

/** Query parameters for one request field: scalars directly, messages by dotted sub-fields, maps as `field[key]`. */
function queryParameters(
  field: DescField,
  prefix: string,
  depth: number,
  schemas: SchemaCollector,
  options: OptionReader,
  snake: boolean,
): ParameterObject[] {
  const name = `${prefix}${snake ? field.name : field.jsonName}`;
  const description = publicComment(field);
  const required = options.fieldBehaviors(field).includes(FieldBehavior.REQUIRED);
  const param = (schema: SchemaObject | ReferenceObject, extra: Partial<ParameterObject> = {}): ParameterObject => ({
    name,
    in: "query",
    schema: stripDocs(schema),
    ...(description !== "" ? { description } : {}),
    ...(required ? { required: true } : {}),
    ...extra,
  });
  switch (field.fieldKind) {
    case "scalar":
      return [param(scalarSchema(field.scalar))];
    case "enum":
      return [param(schemas.typeSchema(field.enum, "request"))];
    case "list":
      if (field.listKind === "message") return []; // repeated messages cannot be written in a query string
      return [param(schemas.fieldSchema(field, "request"), { style: "form", explode: true })];
    case "map":
      if (field.mapKind === "message") return [];
      return [param(schemas.fieldSchema(field, "request"), { style: "deepObject", explode: true })];
    case "message": {
      const wkt = wellKnownSchema(field.message);
      if (wkt) return wkt.type === "object" || wkt.type === "array" || wkt.type === undefined ? [] : [param(wkt)];
      if (depth >= MAX_QUERY_DEPTH) return [];
      return field.message.fields.flatMap((sub) =>
        queryParameters(sub, `${name}.`, depth + 1, schemas, options, snake),
      );
    }
  }
}

/** The schema of an enum published by number (`provider=5`). */
function enumNumberSchema(numbers: readonly number[]): SchemaObject {
  return { type: "integer", format: "int32", enum: [...numbers] };
}

function errorResponses(method: MethodModel): OperationObject["responses"] {
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  return {
    "400": ref("BadRequest"),
    ...(method.isPublic ? {} : { "401": ref("Unauthenticated"), "403": ref("PermissionDenied") }),
    "404": ref("NotFound"),
    default: ref("Error"),
  };
}

/** A parameter carries its own description; keep only the type part of a field schema. */
function stripDocs(schema: SchemaObject | ReferenceObject): SchemaObject | ReferenceObject {
  if ("$ref" in schema) return { $ref: schema.$ref };
  const { description: _description, readOnly: _readOnly, writeOnly: _writeOnly, ...rest } = schema;
  return rest;
}
