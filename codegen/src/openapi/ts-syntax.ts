/**
 * The few pieces of TypeScript syntax the OpenAPI emitters write inside a line: property keys,
 * names and literals. Files, imports and doc comments come from codegen/src/printer.
 */

/** A property key as written in a type or object literal: bare when it is an identifier. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name);
}

/** `identity-admin` and `createPool` to `IdentityAdmin` and `CreatePool`. */
export function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== "")
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

/** A string literal type or value. */
export function literal(value: string | number | boolean | null): string {
  return JSON.stringify(value);
}
