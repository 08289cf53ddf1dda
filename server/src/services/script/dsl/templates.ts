import { jsonToText } from "./cel-json.js";
import type { JsonValue } from "./cel-json.js";
import { BindingScope, CompiledExpression, ExpressionSyntaxError } from "./expressions.js";
import type { ExpressionBindings, ExpressionSite } from "./expressions.js";

/**
 * Templates: the JSON values of `execute.input`, `yield.value`, `set.values`, `output`, prompts
 * and messages. A template is any JSON value in which strings carry CEL:
 *
 * - a string that is exactly `${ expr }` is replaced by the expression's JSON value, of any type
 *   (`"${inputs.count}"` → `3`, `"${steps.fetch.output}"` → the whole object);
 * - a string with `${…}` among other text is interpolated: each expression's value is inserted as
 *   text (strings as they are, anything else as compact JSON), giving a string;
 * - `$${` is a literal `${`; object keys are never templates.
 *
 * Every expression is compiled when the script is parsed (all syntax errors are reported at
 * once, each with the JSON Pointer of its string); evaluation converts the bindings once per
 * template and names the step, field and expression that failed.
 */

type TemplateNode =
  | { kind: "literal"; value: JsonValue }
  | { kind: "expression"; expression: CompiledExpression }
  | { kind: "text"; parts: (string | CompiledExpression)[] }
  | { kind: "array"; items: TemplateNode[] }
  | { kind: "object"; entries: [string, TemplateNode][] };

/** Every syntax error of one template; `errors` point at the strings that hold them. */
export class TemplateSyntaxError extends Error {
  override name = "TemplateSyntaxError";
  constructor(readonly errors: readonly ExpressionSyntaxError[]) {
    super(errors.map((error) => error.message).join("; "));
  }
}

export class CompiledTemplate {
  constructor(
    /** The template as written; `toJSON` returns it. */
    readonly source: JsonValue,
    readonly site: ExpressionSite,
    private readonly node: TemplateNode,
    /** Every expression in the template, in document order. */
    readonly expressions: readonly CompiledExpression[],
  ) {}

  /** True when the template holds no expression: its value is `source`. */
  get isConstant(): boolean {
    return this.expressions.length === 0;
  }

  evaluate(bindings: ExpressionBindings | BindingScope): JsonValue {
    const scope = bindings instanceof BindingScope ? bindings : new BindingScope(bindings);
    return evaluateNode(this.node, scope);
  }

  toJSON(): JsonValue {
    return this.source;
  }
}

/** Compiles a template; throws TemplateSyntaxError listing every bad expression. */
export function compileTemplate(value: JsonValue, site: ExpressionSite | string): CompiledTemplate {
  const base = typeof site === "string" ? { pointer: site } : site;
  const errors: ExpressionSyntaxError[] = [];
  const expressions: CompiledExpression[] = [];
  const compile = (source: string, pointer: string): CompiledExpression | undefined => {
    try {
      const expression = CompiledExpression.compile(source, { ...base, pointer });
      expressions.push(expression);
      return expression;
    } catch (error) {
      if (!(error instanceof ExpressionSyntaxError)) throw error;
      errors.push(error);
      return undefined;
    }
  };
  const build = (node: JsonValue, pointer: string): TemplateNode => {
    if (typeof node === "string") return buildString(node, pointer, compile, errors);
    if (Array.isArray(node)) {
      const items = node.map((item, index) => build(item, `${pointer}/${index}`));
      const values = literalValues(items.map((item): [string, TemplateNode] => ["", item]));
      return values === undefined
        ? { kind: "array", items }
        : { kind: "literal", value: values.map(([, item]) => item) };
    }
    if (node !== null && typeof node === "object") {
      const entries = Object.keys(node).map((key): [string, TemplateNode] => [
        key,
        build(node[key] as JsonValue, `${pointer}/${escapePointer(key)}`),
      ]);
      const values = literalValues(entries);
      return values === undefined ? { kind: "object", entries } : { kind: "literal", value: objectOf(values) };
    }
    return { kind: "literal", value: node };
  };
  const node = build(value, base.pointer);
  if (errors.length > 0) throw new TemplateSyntaxError(errors);
  return new CompiledTemplate(value, base, node, expressions);
}

/** Evaluates a compiled template against a thread's bindings. */
export function evaluateTemplate(compiled: CompiledTemplate, bindings: ExpressionBindings | BindingScope): JsonValue {
  return compiled.evaluate(bindings);
}

/** JSON Pointer escaping of one reference token (RFC 6901). */
export function escapePointer(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function buildString(
  text: string,
  pointer: string,
  compile: (source: string, pointer: string) => CompiledExpression | undefined,
  errors: ExpressionSyntaxError[],
): TemplateNode {
  const parts: (string | CompiledExpression)[] = [];
  let literal = "";
  let offset = 0;
  while (offset < text.length) {
    if (text.startsWith("$${", offset)) {
      literal += "${";
      offset += 3;
      continue;
    }
    if (!text.startsWith("${", offset)) {
      literal += text[offset];
      offset += 1;
      continue;
    }
    const end = closingBrace(text, offset + 2);
    if (end === -1) {
      errors.push(
        new ExpressionSyntaxError(
          pointer,
          text.slice(offset + 2),
          `"\${" at position ${offset + 1} has no closing "}"`,
        ),
      );
      return { kind: "literal", value: text };
    }
    const source = text.slice(offset + 2, end);
    const whole = offset === 0 && end === text.length - 1;
    const expression = compile(source, pointer);
    if (whole && expression !== undefined) return { kind: "expression", expression };
    if (literal !== "") parts.push(literal);
    literal = "";
    if (expression !== undefined) parts.push(expression);
    offset = end + 1;
  }
  if (parts.length === 0) return { kind: "literal", value: literal };
  if (literal !== "") parts.push(literal);
  return { kind: "text", parts };
}

/**
 * The expression of a string that is exactly `${ expr }`, else undefined. Fields that take only
 * CEL (`when`, `iterate.over`) accept this wrapper too, so either spelling works there.
 */
export function wholeExpression(text: string): string | undefined {
  if (!text.startsWith("${")) return undefined;
  const end = closingBrace(text, 2);
  return end === text.length - 1 ? text.slice(2, end) : undefined;
}

/**
 * Index of the `}` that closes an expression starting at `start`, skipping braces inside CEL
 * map literals and string literals (quoted with ' or ", single or triple, raw with an r prefix).
 */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const char = text[i] as string;
    if (char === "'" || char === '"') {
      const raw = /[rR]/.test(text[i - 1] ?? "") && !/[A-Za-z0-9_]/.test(text[i - 2] ?? "");
      const quote = text.startsWith(char.repeat(3), i) ? char.repeat(3) : char;
      let j = i + quote.length;
      while (j < text.length && !text.startsWith(quote, j)) j += !raw && text[j] === "\\" ? 2 : 1;
      if (j >= text.length) return -1;
      i = j + quote.length - 1;
    } else if (char === "{") {
      depth++;
    } else if (char === "}") {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The values of child nodes when all are literals (a constant subtree), else undefined. */
function literalValues(entries: [string, TemplateNode][]): [string, JsonValue][] | undefined {
  const values: [string, JsonValue][] = [];
  for (const [key, node] of entries) {
    if (node.kind !== "literal") return undefined;
    values.push([key, node.value]);
  }
  return values;
}

/** An object from entries, defining keys such as `__proto__` as plain own properties. */
function objectOf(entries: [string, JsonValue][]): JsonValue {
  const object: { [key: string]: JsonValue } = {};
  for (const [key, value] of entries)
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

function evaluateNode(node: TemplateNode, scope: BindingScope): JsonValue {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "expression":
      return node.expression.evaluate(scope);
    case "text":
      return node.parts.map((part) => (typeof part === "string" ? part : jsonToText(part.evaluate(scope)))).join("");
    case "array":
      return node.items.map((item) => evaluateNode(item, scope));
    case "object":
      return objectOf(node.entries.map(([key, item]) => [key, evaluateNode(item, scope)]));
  }
}
