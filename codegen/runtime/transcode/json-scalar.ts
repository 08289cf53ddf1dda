import { ScalarType, type DescEnum, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { invalidArgument } from "./transcode-error.js";

/**
 * Converts one textual value (from a path segment or a query parameter) into the proto3 JSON
 * value of a field's element type, so that @bufbuild/protobuf's own JSON parser does the real
 * conversion and validation. Only what text cannot say directly is handled here: booleans, enum
 * numbers, and well-known types whose JSON is not a string.
 */
export function textToJson(element: ElementType, text: string, name: string): JsonValue {
  switch (element.kind) {
    case "scalar":
      return element.scalar === ScalarType.BOOL ? parseBool(text, name) : text;
    case "enum":
      return /^-?[0-9]+$/.test(text) ? Number(text) : text;
    case "message": {
      const typeName = element.message.typeName;
      if (typeName === "google.protobuf.BoolValue") return parseBool(text, name);
      if (textMessages.has(typeName)) return text;
      throw invalidArgument(`parameter "${name}" cannot be given as text: ${typeName} is a JSON object`);
    }
  }
}

/** The element type of a field: the field's own type, or that of a list's items or a map's values. */
export type ElementType =
  { kind: "scalar"; scalar: ScalarType } | { kind: "enum"; enum: DescEnum } | { kind: "message"; message: DescMessage };

export function elementTypeOf(field: DescField): ElementType {
  switch (field.fieldKind) {
    case "scalar":
      return { kind: "scalar", scalar: field.scalar };
    case "enum":
      return { kind: "enum", enum: field.enum };
    case "message":
      return { kind: "message", message: field.message };
    case "list":
      return field.listKind === "scalar"
        ? { kind: "scalar", scalar: field.scalar }
        : field.listKind === "enum"
          ? { kind: "enum", enum: field.enum }
          : { kind: "message", message: field.message };
    case "map":
      return field.mapKind === "scalar"
        ? { kind: "scalar", scalar: field.scalar }
        : field.mapKind === "enum"
          ? { kind: "enum", enum: field.enum }
          : { kind: "message", message: field.message };
  }
}

/** Well-known types whose proto3 JSON form is a string or a number written as text. */
const textMessages = new Set([
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.FloatValue",
  "google.protobuf.DoubleValue",
]);

/** True when a message field can be written as one text value. */
export function isTextMessage(message: DescMessage): boolean {
  return textMessages.has(message.typeName) || message.typeName === "google.protobuf.BoolValue";
}

function parseBool(text: string, name: string): boolean {
  if (text === "true") return true;
  if (text === "false") return false;
  throw invalidArgument(`parameter "${name}" must be true or false, got "${text}"`);
}
