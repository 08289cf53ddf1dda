import { toJson, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { HttpRoute } from "../http-route.js";

/**
 * The JSON an HTTP route answers with: the whole response, or the field named by
 * `response_body`. Every field with implicit presence is written, even at its default, with int64
 * as strings and enums as names. A route with `emitUnpopulated` (the data listener's, whose
 * contract says "all fields always emitted") also writes the fields that have explicit presence
 * when they are unset, as `null`: message fields and proto3 `optional` fields, at every depth.
 * Members of a real oneof stay absent, since writing two of them would be ambiguous.
 */
export function encodeResponse<Desc extends DescMessage>(
  schema: Desc,
  route: HttpRoute,
  message: MessageShape<Desc>,
): JsonValue {
  const json = toJson(schema, message, { alwaysEmitImplicit: true }) as JsonObject;
  if (route.emitUnpopulated) fillUnpopulated(reflect(schema, message), json);
  if (route.responseBody === "") return json;
  const field = schema.fields.find((f) => f.name === route.responseBody)!;
  return json[field.jsonName] ?? null;
}

/** Adds `null` for every unset explicit-presence field of `message`, recursing into set ones. */
function fillUnpopulated(message: ReflectMessage, json: JsonObject): void {
  for (const field of message.fields) {
    const set = message.isSet(field);
    // A real oneof's unset members stay absent; proto3 `optional` fields have no DescOneof here.
    if (!set) {
      if (field.oneof === undefined && !(field.jsonName in json)) json[field.jsonName] = null;
      continue;
    }
    const target = json[field.jsonName];
    switch (field.fieldKind) {
      case "message":
        if (isPlainMessage(field.message) && isObject(target)) fillUnpopulated(message.get(field), target);
        break;
      case "list":
        if (field.listKind === "message" && isPlainMessage(field.message) && Array.isArray(target)) {
          let index = 0;
          for (const item of message.get(field)) {
            const entry = target[index++];
            if (isObject(entry)) fillUnpopulated(item as ReflectMessage, entry);
          }
        }
        break;
      case "map":
        if (field.mapKind === "message" && isPlainMessage(field.message) && isObject(target)) {
          for (const [key, item] of message.get(field)) {
            const entry = target[String(key)];
            if (isObject(entry)) fillUnpopulated(item as ReflectMessage, entry);
          }
        }
        break;
    }
  }
}

/** Well-known types have JSON forms of their own (Struct is an object of any keys): left as written. */
function isPlainMessage(message: DescMessage): boolean {
  return !message.typeName.startsWith("google.protobuf.");
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);
}
