import { fromJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import type { HttpRoute } from "../http-route.js";
import { elementTypeOf, textToJson } from "./json-scalar.js";
import { queryToJson } from "./query-to-json.js";
import { invalidArgument } from "./transcode-error.js";

/** What an HTTP request contributes to a request message. */
export interface HttpRequestParts {
  /** Decoded path variables by proto field path, from the route matcher. */
  readonly captures: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The raw JSON body (the transport has checked its media type); empty when there is none. */
  readonly body: Uint8Array;
}

/**
 * Builds the request message of an HTTP route: the body per `body`, the remaining fields from the
 * query, then the path variables over both (the path wins over the body). Everything is gathered
 * as proto3 JSON and parsed once by @bufbuild/protobuf, so every type rule (int64 strings, enum
 * names or numbers, base64, well-known types, oneofs) is the library's, and any failure is
 * INVALID_ARGUMENT naming the field.
 */
export function decodeRequest<Desc extends DescMessage>(
  schema: Desc,
  route: HttpRoute,
  parts: HttpRequestParts,
): MessageShape<Desc> {
  const json = bodyToJson(schema, route, parts);
  // Most requests have no query string: nothing to read from it, and no sets to build.
  if (parts.query.size > 0) {
    const { queryFields, pathFields } = fieldSetsOf(route);
    mergeInto(
      json,
      queryToJson(schema, parts.query, queryFields, pathFields, {
        aliases: route.queryAliases,
        ignored: route.queryIgnored,
      }),
    );
  }
  for (const variable of route.template.variables) {
    const value = parts.captures[variable.fieldPath];
    if (value !== undefined) setPathValue(schema, json, variable.fieldPath, value);
  }
  try {
    return fromJson(schema, json, { ignoreUnknownFields: false });
  } catch (error) {
    throw invalidArgument(error instanceof Error ? error.message : String(error), error);
  }
}

/** The fields a route's query may set, and those its path binds: made once per route. */
const fieldSets = new WeakMap<HttpRoute, { queryFields: ReadonlySet<string>; pathFields: ReadonlySet<string> }>();

function fieldSetsOf(route: HttpRoute): { queryFields: ReadonlySet<string>; pathFields: ReadonlySet<string> } {
  let sets = fieldSets.get(route);
  if (!sets) {
    sets = {
      queryFields: new Set(route.queryFields),
      pathFields: new Set(route.template.variables.map((variable) => variable.fieldPath)),
    };
    fieldSets.set(route, sets);
  }
  return sets;
}

function bodyToJson(schema: DescMessage, route: HttpRoute, parts: HttpRequestParts): JsonObject {
  const { body } = parts;
  if (route.body === "") {
    if (body.byteLength > 0)
      throw invalidArgument(`${route.httpMethod} ${route.template.source} takes no request body`);
    return {};
  }
  if (body.byteLength === 0) return {};
  let value: JsonValue;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body)) as JsonValue;
  } catch (error) {
    throw invalidArgument(
      `request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      error,
    );
  }
  if (route.body === "*") {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw invalidArgument(`request body must be a JSON object of ${schema.typeName}`);
    }
    return value;
  }
  const field = schema.fields.find((f) => f.name === route.body)!;
  return { [field.jsonName]: value };
}

/** Query values fill fields the body did not; a field set by both is ambiguous and rejected. */
function mergeInto(target: JsonObject, source: JsonObject): void {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (existing === undefined) {
      target[key] = value;
    } else if (isObject(existing) && isObject(value)) {
      mergeInto(existing, value);
    } else {
      throw invalidArgument(`field "${key}" is given both in the body and in the query`);
    }
  }
}

function setPathValue(schema: DescMessage, json: JsonObject, fieldPath: string, value: string): void {
  let message: DescMessage = schema;
  let target = json;
  const names = fieldPath.split(".");
  for (const [index, name] of names.entries()) {
    const field = message.fields.find((f) => f.name === name)!;
    if (index === names.length - 1) {
      // The path wins: a body value for the same field is replaced (the specification relies on
      // this, for example a bucket in the path over a bucket in the body).
      delete target[field.name];
      target[field.jsonName] = textToJson(elementTypeOf(field), value, fieldPath);
      return;
    }
    if (field.fieldKind !== "message") return;
    // Descend into the body's (or query's) value, keeping its other sub-fields; a value given
    // under the proto name moves to the JSON name so that the message has one key.
    if (field.name !== field.jsonName && field.name in target) {
      if (target[field.jsonName] === undefined) target[field.jsonName] = target[field.name]!;
      delete target[field.name];
    }
    const next = target[field.jsonName];
    // Not a JSON object: left as sent, for the JSON parser to reject with its own message.
    if (next !== undefined && next !== null && !isObject(next)) return;
    target = isObject(next) ? next : (target[field.jsonName] = {});
    message = field.message;
  }
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
