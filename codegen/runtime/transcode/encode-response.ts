import { toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import type { HttpRoute } from "../http-route.js";

/**
 * The JSON an HTTP route answers with: the whole response, or the field named by
 * `response_body`. Every field is written, even at its default (the specification asks for "all
 * fields always emitted"), with int64 as strings and enums as names.
 */
export function encodeResponse<Desc extends DescMessage>(
  schema: Desc,
  route: HttpRoute,
  message: MessageShape<Desc>,
): JsonValue {
  const json = toJson(schema, message, { alwaysEmitImplicit: true }) as Record<string, JsonValue>;
  if (route.responseBody === "") return json;
  const field = schema.fields.find((f) => f.name === route.responseBody)!;
  return json[field.jsonName] ?? null;
}
