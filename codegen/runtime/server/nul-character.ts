import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { InvalidRequestError } from "./invalid-request-error.js";

/**
 * Strings holding U+0000 are refused where a request enters, on every plane: PostgreSQL text and
 * jsonb cannot hold the character, so such a value would otherwise fail deep inside a handler
 * with a database error instead of a 400 naming the field.
 */
export const NUL_REASON = "must not contain the NUL character (U+0000)";

/**
 * The first field of a request message, by proto names (`metadata["k"]`, `rules[2].name`), whose
 * string value or map key holds U+0000; undefined when there is none. Bytes fields are data and
 * may hold any byte.
 */
export function findNulInMessage(desc: DescMessage, message: object, prefix = ""): string | undefined {
  const record = message as Readonly<Record<string, unknown>>;
  for (const field of desc.fields) {
    let value: unknown;
    if (field.oneof) {
      const selected = record[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (selected?.case !== field.localName) continue;
      value = selected.value;
    } else {
      value = record[field.localName];
    }
    if (value === undefined || value === null) continue;
    const found = findInField(field, value, `${prefix}${field.name}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

function findInField(field: DescField, value: unknown, path: string): string | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return field.scalar === ScalarType.STRING && hasNul(value) ? path : undefined;
    case "message":
      return findNulInMessage(field.message, value as object, `${path}.`);
    case "enum":
      return undefined;
    case "list":
      return findInElements(field, value as readonly unknown[], (index) => `${path}[${index}]`);
    case "map": {
      for (const [key, entry] of Object.entries(value as Readonly<Record<string, unknown>>)) {
        const at = `${path}[${JSON.stringify(key.replaceAll("\0", "\\0"))}]`;
        if (hasNul(key)) return at;
        const found =
          field.mapKind === "message"
            ? findNulInMessage(field.message, entry as object, `${at}.`)
            : field.mapKind === "scalar" && field.scalar === ScalarType.STRING && hasNul(entry)
              ? at
              : undefined;
        if (found !== undefined) return found;
      }
      return undefined;
    }
  }
}

function findInElements(
  field: DescField & { fieldKind: "list" },
  items: readonly unknown[],
  at: (index: number) => string,
): string | undefined {
  for (const [index, item] of items.entries()) {
    if (field.listKind === "message") {
      const found = findNulInMessage(field.message, item as object, `${at(index)}.`);
      if (found !== undefined) return found;
    } else if (field.listKind === "scalar" && field.scalar === ScalarType.STRING && hasNul(item)) {
      return at(index);
    }
  }
  return undefined;
}

/**
 * The first place in a parsed JSON or form value (strings and object keys) that holds U+0000,
 * as `body.members[0].name`; undefined when there is none.
 */
export function findNulInJson(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return hasNul(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findNulInJson(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    for (const [key, item] of Object.entries(value)) {
      const at = `${path}.${key.replaceAll("\0", "\\0")}`;
      if (hasNul(key)) return at;
      const found = findNulInJson(item, at);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function hasNul(value: unknown): boolean {
  return typeof value === "string" && value.includes("\0");
}

/**
 * Refuses a parsed JSON or form value, or a record of parameters, holding U+0000 anywhere, as
 * INVALID_ARGUMENT naming the place under `root` (`body.members[0].name`, `query.filter`).
 */
export function refuseNulInJson(value: unknown, root: string): void {
  const field = findNulInJson(value, root);
  if (field !== undefined) throw new InvalidRequestError(field, NUL_REASON);
}

/** Refuses a request message holding U+0000 in a string, naming the field by its proto name. */
export function refuseNulInMessage(desc: DescMessage, message: object): void {
  const field = findNulInMessage(desc, message);
  if (field !== undefined) throw new InvalidRequestError(field, NUL_REASON);
}
