import { GenerationError } from "../generation-error.js";
import { generatedHeader, type GeneratedHeader } from "./generated-header.js";

/** A name imported from a module; printing it adds the import statement. */
export interface TsImport {
  readonly kind: "ts-import";
  readonly name: string;
  /** A package (`@platform/codegen/runtime`) or, starting with `./`, a path under the output root. */
  readonly from: string;
  readonly typeOnly: boolean;
}

/** What `print` takes: text, a literal, an imported name, or a list of these. */
export type TsPrintable = string | number | boolean | TsImport | readonly TsPrintable[];

/**
 * One generated TypeScript file, printed line by line. Imports are never written by hand: printing
 * a `TsImport` records it, and `content()` writes one statement per module (values and types
 * apart, names sorted) under the shared header. Both generators print every file through it, the
 * protoc plugin with protoplugin's symbols for descriptors (see proto/desc-imports.ts).
 */
export interface TsFile {
  /** Adds one line; the parts are joined without separators. */
  print(...parts: TsPrintable[]): void;
  /** A name to print; a value import wins over a type-only import of the same name. */
  import(name: string, from: string, typeOnly?: boolean): TsImport;
  /** A JSDoc block at `indent`, ending with a line break, or "" for no text. */
  jsDoc(text: string | undefined, indent?: string): string;
  /** The whole file: header, imports, body. */
  content(): string;
}

/** Longest import statement kept on one line; longer ones list one name per line. */
const MAX_IMPORT_LINE = 120;

/** `path` is the file's path under the output root, which relative imports are resolved against. */
export function createTsFile(path: string, header: GeneratedHeader): TsFile {
  const lines: string[] = [];
  /** module -> name -> type-only */
  const imports = new Map<string, Map<string, boolean>>();
  const owners = new Map<string, string>();

  function record(symbol: TsImport): string {
    const owner = owners.get(symbol.name);
    if (owner !== undefined && owner !== symbol.from) {
      throw new GenerationError(`${path}: ${symbol.name} is imported from both ${owner} and ${symbol.from}`);
    }
    owners.set(symbol.name, symbol.from);
    const names = imports.get(symbol.from) ?? new Map<string, boolean>();
    names.set(symbol.name, (names.get(symbol.name) ?? true) && symbol.typeOnly);
    imports.set(symbol.from, names);
    return symbol.name;
  }

  function text(part: TsPrintable): string {
    if (typeof part === "string") return part;
    if (typeof part === "number" || typeof part === "boolean") return String(part);
    if (isImport(part)) return record(part);
    return part.map(text).join("");
  }

  return {
    print(...parts) {
      lines.push(`${parts.map(text).join("")}\n`);
    },
    import(name, from, typeOnly = false) {
      return { kind: "ts-import", name, from, typeOnly };
    },
    jsDoc,
    content() {
      const statements = [...imports.entries()]
        .map(([from, names]) => ({ from: specifier(path, from), names }))
        .sort((a, b) => order(a.from) - order(b.from) || (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))
        .flatMap(({ from, names }) => {
          const values = [...names]
            .filter(([, typeOnly]) => !typeOnly)
            .map(([name]) => name)
            .sort();
          const types = [...names]
            .filter(([, typeOnly]) => typeOnly)
            .map(([name]) => name)
            .sort();
          return [
            ...(values.length > 0 ? [importStatement("import", values, from)] : []),
            ...(types.length > 0 ? [importStatement("import type", types, from)] : []),
          ];
        });
      const importBlock = statements.length > 0 ? `\n${statements.join("")}` : "";
      return `${generatedHeader(header)}${importBlock}\n${lines.join("").replace(/^\n+/, "")}`;
    },
  };
}

function isImport(part: TsPrintable): part is TsImport {
  return typeof part === "object" && !Array.isArray(part) && (part as TsImport).kind === "ts-import";
}

/** Packages first, then files. */
function order(specifier: string): number {
  return specifier.startsWith(".") ? 1 : 0;
}

function importStatement(keyword: string, names: readonly string[], from: string): string {
  const line = `${keyword} { ${names.join(", ")} } from ${JSON.stringify(from)};\n`;
  if (line.length <= MAX_IMPORT_LINE) return line;
  return `${keyword} {\n${names.map((name) => `  ${name},\n`).join("")}} from ${JSON.stringify(from)};\n`;
}

/** A root-relative `./a/b.js` as seen from the file at `path`; packages unchanged. */
function specifier(path: string, from: string): string {
  if (!from.startsWith("./")) return from;
  const fileDir = path.split("/").slice(0, -1);
  const target = from.slice(2).split("/");
  let common = 0;
  while (common < fileDir.length && common < target.length - 1 && fileDir[common] === target[common]) common++;
  const up = fileDir.length - common;
  const rest = target.slice(common).join("/");
  return up === 0 ? `./${rest}` : `${"../".repeat(up)}${rest}`;
}

/** A JSDoc block at `indent`, or "" for no text. `*\/` inside the text cannot end the comment early. */
export function jsDoc(text: string | undefined, indent = ""): string {
  const lines = (text ?? "")
    .trim()
    .replace(/\*\//g, "*\\/")
    .split("\n")
    .map((line) => line.trimEnd());
  if (lines.length === 1 && lines[0] === "") return "";
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => (line === "" ? `${indent} *` : `${indent} * ${line}`)).join("\n")}\n${indent} */\n`;
}
