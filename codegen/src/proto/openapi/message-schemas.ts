import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import type { ReferenceObject, SchemaObject } from "openapi3-ts/oas31";
import { publicComment } from "../public-comment.js";
import { FieldBehavior, type OptionReader } from "../options.js";
import { GenerationError } from "../../generation-error.js";

/**
 * Turns messages and enums into JSON Schemas that follow proto3 JSON exactly as the server writes
 * it: camelCase names, 64-bit integers as strings, enums as names, bytes as base64 and the
 * well-known types in their JSON forms. Messages and enums become named components (their full
 * proto name); well-known types are inlined, since they are JSON scalars on the wire.
 *
 * A message is read in one of two directions. What a response holds is what the server writes:
 * HTTP routes write every field with implicit presence, even at its default, so those fields are
 * `required` there. What a request holds is what a caller may send: only the fields marked
 * `REQUIRED` are `required`. A message used both ways gets two components, the request's one
 * named `<message>Input`.
 */
export type Direction = "request" | "response";

export interface SchemaCollector {
  /** A schema or `$ref` for a message or enum, registering the component on first use. */
  typeSchema(desc: DescMessage | DescEnum, direction: Direction): SchemaObject | ReferenceObject;
  /** The schema of one field as it appears in JSON. */
  fieldSchema(field: DescField, direction: Direction): SchemaObject | ReferenceObject;
  /** A request message schema without some top-level fields (those a path template binds). */
  requestSchemaWithout(message: DescMessage, omit: ReadonlySet<string>): SchemaObject;
  /** Every component registered so far, by name, sorted. */
  components(): [string, SchemaObject][];
}

/** The messages a document reads in each direction (every message reachable from a route's request or response). */
export interface MessageUses {
  readonly request: ReadonlySet<string>;
  readonly response: ReadonlySet<string>;
  /**
   * Messages answered by routes that write every field (the data listener's): in responses their
   * unset message and proto3 `optional` fields are written too, as `null`, so those are required
   * and nullable there.
   */
  readonly emitUnpopulated?: ReadonlySet<string>;
}

/** Fills `into` with a message and every message its fields reach. */
export function collectMessages(message: DescMessage, into: Set<string>): void {
  if (into.has(message.typeName)) return;
  into.add(message.typeName);
  for (const field of message.fields) {
    const target =
      field.fieldKind === "message"
        ? field.message
        : field.fieldKind === "list" || field.fieldKind === "map"
          ? field.message
          : undefined;
    if (target) collectMessages(target, into);
  }
}

/**
 * Whether the server writes a field in every response: repeated and map fields (as `[]` and `{}`
 * when empty) and singular scalars and enums with implicit presence (at their zero value). A
 * message field, a proto3 `optional` field or a oneof member is written only when set.
 */
export function alwaysWritten(field: DescField): boolean {
  if (field.fieldKind === "list" || field.fieldKind === "map") return true;
  if (field.fieldKind === "message" || field.oneof !== undefined) return false;
  return field.presence === IMPLICIT_PRESENCE;
}

/** The schema `false`, which no value matches (openapi3-ts's types have no boolean schemas). */
const forbidden = false as unknown as SchemaObject;

/** FeatureSet.FieldPresence.IMPLICIT: proto3 singular fields without `optional`. */
const IMPLICIT_PRESENCE = 2;

export function createSchemaCollector(options: OptionReader, uses: MessageUses): SchemaCollector {
  const components = new Map<string, SchemaObject>();

  const componentName = (desc: DescMessage | DescEnum, direction: Direction): string => {
    if (desc.kind !== "message" || direction !== "request" || !uses.response.has(desc.typeName)) return desc.typeName;
    const name = `${desc.typeName}Input`;
    if (uses.request.has(name) || uses.response.has(name)) {
      throw new GenerationError(
        `${desc.typeName} is read in requests and responses, and its request schema's name ${name} is taken by a message`,
      );
    }
    return name;
  };

  const typeSchema = (desc: DescMessage | DescEnum, direction: Direction): SchemaObject | ReferenceObject => {
    const wkt =
      desc.kind === "message"
        ? wellKnownSchema(desc)
        : desc.typeName === "google.protobuf.NullValue"
          ? { type: "null" as const }
          : undefined;
    if (wkt) return wkt;
    const name = componentName(desc, direction);
    if (!components.has(name)) {
      components.set(name, {}); // placeholder first: messages may refer to themselves
      components.set(name, desc.kind === "enum" ? enumSchema(desc) : messageSchema(desc, new Set(), direction));
    }
    return { $ref: `#/components/schemas/${name}` };
  };

  const singularSchema = (field: DescField, direction: Direction): SchemaObject | ReferenceObject => {
    if (field.fieldKind === "scalar") return scalarSchema(field.scalar);
    if (field.fieldKind === "enum") return typeSchema(field.enum, direction);
    if (field.fieldKind === "message") return typeSchema(field.message, direction);
    throw new Error(`unexpected field kind ${field.fieldKind}`);
  };

  /** The type part of a field's schema, without its documentation. */
  const fieldType = (field: DescField, direction: Direction): SchemaObject | ReferenceObject => {
    switch (field.fieldKind) {
      case "list": {
        const items =
          field.listKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.listKind === "enum"
              ? typeSchema(field.enum, direction)
              : typeSchema(field.message, direction);
        return { type: "array", items };
      }
      case "map": {
        const values =
          field.mapKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.mapKind === "enum"
              ? typeSchema(field.enum, direction)
              : typeSchema(field.message, direction);
        return { type: "object", additionalProperties: values };
      }
      default:
        return singularSchema(field, direction);
    }
  };

  const fieldSchema = (field: DescField, direction: Direction): SchemaObject | ReferenceObject => {
    const annotated: SchemaObject = { ...fieldType(field, direction) };
    const description = publicComment(field);
    if (description !== "") annotated.description = description;
    const behaviors = options.fieldBehaviors(field);
    if (behaviors.includes(FieldBehavior.OUTPUT_ONLY)) annotated.readOnly = true;
    if (behaviors.includes(FieldBehavior.INPUT_ONLY)) annotated.writeOnly = true;
    return annotated;
  };

  const writesAll = (field: DescField, direction: Direction): boolean =>
    direction === "response" && field.oneof === undefined && uses.emitUnpopulated?.has(field.parent.typeName) === true;

  const isRequired = (field: DescField, direction: Direction): boolean =>
    direction === "response"
      ? alwaysWritten(field) || writesAll(field, direction)
      : options.fieldBehaviors(field).includes(FieldBehavior.REQUIRED);

  const messageSchema = (message: DescMessage, omit: ReadonlySet<string>, direction: Direction): SchemaObject => {
    const properties: Record<string, SchemaObject | ReferenceObject> = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (omit.has(field.name)) continue;
      const property = fieldSchema(field, direction);
      // Written as null when unset: the value's schema or null.
      properties[field.jsonName] = writesAll(field, direction) && !alwaysWritten(field) ? nullable(property) : property;
      if (isRequired(field, direction)) required.push(field.jsonName);
    }
    const schema: SchemaObject = { type: "object" };
    const description = publicComment(message);
    if (description !== "") schema.description = description;
    schema.properties = properties;
    if (required.length > 0) schema.required = required;
    const guards = message.oneofs
      .map((oneof) => oneof.fields.filter((f) => !omit.has(f.name)))
      .filter((members) => members.length > 1)
      .map((members) => oneofGuard(members, direction));
    if (guards.length === 1) Object.assign(schema, guards[0]);
    if (guards.length > 1) schema.allOf = guards;
    return schema;
  };

  /**
   * A oneof allows at most one member. Each alternative names its member's type and forbids the
   * others (`false`), and a last one forbids them all, for a oneof left unset: every alternative
   * defines the properties it mentions, so code generators read `{a: A} | {b: B} | {}` exactly.
   */
  const oneofGuard = (members: readonly DescField[], direction: Direction): SchemaObject => {
    const none = Object.fromEntries(members.map((m) => [m.jsonName, forbidden]));
    const alternatives: SchemaObject[] = members.map((member) => ({
      properties: { ...none, [member.jsonName]: fieldType(member, direction) },
      required: [member.jsonName],
    }));
    alternatives.push({ properties: none });
    return { oneOf: alternatives };
  };

  return {
    typeSchema,
    fieldSchema,
    requestSchemaWithout: (message, omit) => messageSchema(message, omit, "request"),
    components: () => [...components.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  };
}

/** A field schema that also admits `null`, its documentation kept on the outside. */
function nullable(schema: SchemaObject | ReferenceObject): SchemaObject {
  const { description, readOnly, writeOnly, ...type } = schema as SchemaObject;
  // A schema of any JSON value (google.protobuf.Value) admits null already.
  if (!("$ref" in schema) && Object.keys(type).length === 0) return schema;
  return {
    oneOf: ["$ref" in schema ? { $ref: schema.$ref } : type, { type: "null" }],
    ...(description !== undefined ? { description } : {}),
    ...(readOnly !== undefined ? { readOnly } : {}),
    ...(writeOnly !== undefined ? { writeOnly } : {}),
  };
}

function enumSchema(desc: DescEnum): SchemaObject {
  const lines = [publicComment(desc)];
  for (const value of desc.values) {
    const doc = publicComment(value);
    lines.push(`- \`${value.name}\`${doc === "" ? "" : `: ${doc.replace(/\n/g, " ")}`}`);
  }
  lines.push("", "Written as the value's name; the number is accepted on input.");
  return { type: "string", enum: desc.values.map((v) => v.name), description: lines.join("\n").trim() };
}

/** Proto3 JSON of each scalar type. */
export function scalarSchema(scalar: ScalarType): SchemaObject {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", format: "byte", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", format: "int64", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "string", format: "int64", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", format: "uint64", pattern: "^[0-9]+$" };
  }
}

const wrapperScalars: Record<string, ScalarType> = {
  "google.protobuf.DoubleValue": ScalarType.DOUBLE,
  "google.protobuf.FloatValue": ScalarType.FLOAT,
  "google.protobuf.Int64Value": ScalarType.INT64,
  "google.protobuf.UInt64Value": ScalarType.UINT64,
  "google.protobuf.Int32Value": ScalarType.INT32,
  "google.protobuf.UInt32Value": ScalarType.UINT32,
  "google.protobuf.BoolValue": ScalarType.BOOL,
  "google.protobuf.StringValue": ScalarType.STRING,
  "google.protobuf.BytesValue": ScalarType.BYTES,
};

/** The JSON form of a well-known type, or undefined for an ordinary message. */
export function wellKnownSchema(message: DescMessage): SchemaObject | undefined {
  const wrapped = wrapperScalars[message.typeName];
  if (wrapped !== undefined) return scalarSchema(wrapped);
  switch (message.typeName) {
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$", examples: ["30s", "1.5s"] };
    case "google.protobuf.FieldMask":
      return { type: "string", description: "Comma-separated field paths in camelCase." };
    case "google.protobuf.Struct":
      return { type: "object", additionalProperties: true };
    case "google.protobuf.Value":
      return { description: "Any JSON value." };
    case "google.protobuf.ListValue":
      return { type: "array", items: {} };
    case "google.protobuf.Empty":
      return { type: "object" };
    case "google.protobuf.Any":
      return {
        type: "object",
        properties: { "@type": { type: "string" } },
        required: ["@type"],
        additionalProperties: true,
      };
    default:
      return undefined;
  }
}
