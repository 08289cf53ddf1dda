import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { elementTypeOf, isTextMessage, textToJson } from "./json-scalar.js";
import { invalidArgument } from "./transcode-error.js";

/**
 * Turns a query string into the proto3 JSON object of the request fields it sets.
 *
 * - Names are proto names or JSON (camelCase) names: `page_size` and `pageSize` are one field.
 * - Message fields are reached with dots: `filter.status=ACTIVE`.
 * - Repeated fields take one parameter per element: `tags=a&tags=b`.
 * - Maps take `field[key]=value`.
 * - Repeated messages take their scalar sub-fields by position: `labels.key=a&labels.value=1&
 *   labels.key=b&labels.value=2` is `[{key:a,value:1},{key:b,value:2}]`.
 * - A parameter naming no field, a field the path or the body already binds, or a singular field
 *   given twice is rejected with the parameter's name.
 *
 * `allowed` lists the top-level proto field names the route lets the query set; `pathBound` lists
 * the dotted proto field paths the path template binds (`parent.name`), which the query must not
 * set even when their top-level message field is allowed. `naming` adds the route's declared
 * aliases (alias -> proto name of a top-level field) and the top-level fields it ignores.
 */
export function queryToJson(
  message: DescMessage,
  query: URLSearchParams,
  allowed: ReadonlySet<string>,
  pathBound: ReadonlySet<string> = new Set(),
  naming: QueryNaming = {},
): JsonObject {
  const json: JsonObject = {};
  const seen = new Set<string>();
  const positions = new Map<string, number>();
  const ignored = new Set(
    message.fields.filter((f) => naming.ignored?.includes(f.name)).flatMap((f) => [f.name, f.jsonName]),
  );
  for (const [name, value] of query) {
    const parsed = parseName(name);
    if (ignored.has(parsed.segments[0]!)) continue;
    const alias = naming.aliases?.[parsed.segments[0]!];
    if (alias !== undefined) parsed.segments[0] = alias;
    const path = resolve(message, parsed.segments, name);
    const top = path[0]!;
    if (!allowed.has(top.name)) {
      throw invalidArgument(
        `query parameter "${name}" is not allowed here: field "${top.name}" comes from the path or the body`,
      );
    }
    const fieldPath = path.map((f) => f.name).join(".");
    if (pathBound.has(fieldPath)) {
      throw invalidArgument(`query parameter "${name}" is not allowed here: field "${fieldPath}" comes from the path`);
    }
    setValue(json, path, parsed.mapKey, value, name, seen, positions);
  }
  return json;
}

/** What a route declares about its query names beyond the fields' own names. */
export interface QueryNaming {
  /** Alias -> proto name of the top-level field it sets. */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Proto names of top-level fields whose query parameters are dropped unread. */
  readonly ignored?: readonly string[];
}

interface ParsedName {
  readonly segments: string[];
  readonly mapKey: string | undefined;
}

const namePattern = /^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\[([^\]]*)\])?$/;

function parseName(name: string): ParsedName {
  const match = namePattern.exec(name);
  if (!match) throw invalidArgument(`unknown query parameter "${name}"`);
  return { segments: match[1]!.split("."), mapKey: match[2] };
}

/** Resolves each dotted segment to a field (by proto or JSON name). */
function resolve(message: DescMessage, segments: readonly string[], name: string): DescField[] {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const segment of segments) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === segment || f.jsonName === segment);
    if (!field) throw invalidArgument(`unknown query parameter "${name}"`);
    fields.push(field);
    current =
      field.fieldKind === "message"
        ? field.message
        : field.fieldKind === "list" && field.listKind === "message"
          ? field.message
          : undefined;
  }
  return fields;
}

function setValue(
  json: JsonObject,
  path: readonly DescField[],
  mapKey: string | undefined,
  text: string,
  name: string,
  seen: Set<string>,
  positions: Map<string, number>,
): void {
  let target = json;
  for (let i = 0; i < path.length - 1; i++) {
    const field = path[i]!;
    if (field.fieldKind === "list") {
      // A repeated message: this sub-field's n-th occurrence fills the n-th element.
      if (i !== path.length - 2)
        throw invalidArgument(`query parameter "${name}" nests too deep inside repeated field "${field.name}"`);
      const key = path.map((f) => f.name).join(".");
      const index = positions.get(key) ?? 0;
      positions.set(key, index + 1);
      const list = (target[field.jsonName] ??= []) as JsonObject[];
      target = list[index] ??= {};
      continue;
    }
    if (field.fieldKind !== "message" || isTextMessage(field.message)) {
      throw invalidArgument(`unknown query parameter "${name}": field "${field.name}" has no sub-fields`);
    }
    target = (target[field.jsonName] ??= {}) as JsonObject;
  }
  const field = path[path.length - 1]!;
  const key = field.jsonName;
  if (mapKey !== undefined) {
    if (field.fieldKind !== "map")
      throw invalidArgument(`query parameter "${name}": field "${field.name}" is not a map`);
    const map = (target[key] ??= {}) as JsonObject;
    if (mapKey in map) throw invalidArgument(`query parameter "${name}" is given more than once`);
    map[mapKey] = textToJson(elementTypeOf(field), text, name);
    return;
  }
  switch (field.fieldKind) {
    case "map":
      throw invalidArgument(`query parameter "${name}": map field "${field.name}" takes "${name}[key]=value"`);
    case "list":
      if (field.listKind === "message" && !isTextMessage(field.message)) {
        throw invalidArgument(
          `query parameter "${name}": repeated message field "${field.name}" takes its sub-fields, as "${name}.<field>"`,
        );
      }
      ((target[key] ??= []) as JsonValue[]).push(textToJson(elementTypeOf(field), text, name));
      return;
    case "message":
      if (!isTextMessage(field.message)) {
        throw invalidArgument(
          `query parameter "${name}": message field "${field.name}" takes its sub-fields, as "${name}.<field>"`,
        );
      }
      break;
  }
  // Inside a repeated message each occurrence opens the next element, so only other singular
  // fields can be given twice.
  const id = path.map((f) => f.name).join(".");
  if (!path.slice(0, -1).some((f) => f.fieldKind === "list")) {
    if (seen.has(id)) throw invalidArgument(`query parameter "${name}" is given more than once`);
    seen.add(id);
  }
  target[key] = textToJson(elementTypeOf(field), text, name);
}
