/**
 * The few pieces of TypeScript syntax the emitters print by hand: doc comments, property keys and
 * names. Whole files are templates; these keep the templates free of escaping rules.
 */

/** A JSDoc block at `indent`, or "" for no text. `*\/` inside the text cannot end the comment early. */
export function jsDoc(text: string | undefined, indent = ""): string {
  const lines = (text ?? "").trim().replace(/\*\//g, "*\\/").split("\n").map((line) => line.trimEnd());
  if (lines.length === 1 && lines[0] === "") return "";
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => (line === "" ? `${indent} *` : `${indent} * ${line}`)).join("\n")}\n${indent} */\n`;
}

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

/** A type-only import of sorted names, one per line so that adding one is a one-line diff. */
export function typeImport(names: Iterable<string>, from: string): string {
  const sorted = [...new Set(names)].sort();
  return `import type {\n${sorted.map((n) => `  ${n},\n`).join("")}} from ${JSON.stringify(from)};\n`;
}
