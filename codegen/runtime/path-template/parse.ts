import { PathTemplateError } from "./path-template-error.js";
import type { PathSegment, PathTemplate, PathVariable } from "./path-template.js";

/**
 * Parses a `google.api.http` path template into plain data.
 *
 * Follows the grammar in `google/api/http.proto` with these readings where it is loose:
 * - `/` alone is the root path (zero segments), as grpc-gateway accepts it.
 * - The custom verb is the text after the last `:` that is outside braces and after the last
 *   top-level `/`, so `/v1/a:b/c` has the literal `a:b` and `/v1/{name=a/*}:cancel` has the verb
 *   `cancel`. The matcher splits request paths the same way, so a template always matches itself.
 * - Literals are RFC 3986 `pchar`s minus `*` and `=` (which mean something here) and minus `%`:
 *   a pre-encoded literal would need normalising before comparison, and no API path needs one.
 *   `.` and `..` are rejected because every URL parser removes them before a request is sent.
 * - Two variables may not bind the same field, nor one field and a field inside it (`a` and `a.b`),
 *   since the request message cannot hold both.
 *
 * @throws PathTemplateError naming the position and the reason.
 */
export function parsePathTemplate(source: string): PathTemplate {
  return new TemplateParser(source).parse();
}

/** A field path: proto identifiers joined by dots. */
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Characters allowed in literals and verbs, see the JSDoc of `parsePathTemplate`. */
const LITERAL_CHAR = /^[A-Za-z0-9\-._~!$&'()+,;:@]$/;

function isLiteralChar(c: string): boolean {
  return LITERAL_CHAR.test(c);
}

class TemplateParser {
  private pos = 0;
  /** Where the segments stop: the verb's `:`, or the end of the text. */
  private readonly end: number;
  private readonly segments: PathSegment[] = [];
  /** Source offset of each segment, for errors found after the segment was read. */
  private readonly segmentPositions: number[] = [];
  private readonly variables: PathVariable[] = [];
  private insideVariable = false;

  constructor(private readonly source: string) {
    this.end = findVerbColon(source);
  }

  parse(): PathTemplate {
    const { source } = this;
    if (!source.startsWith("/")) this.fail(0, 'a template must start with "/"');
    if (source === "/") return { source, segments: [], variables: [] };
    this.pos = 1;
    this.parseSegments();
    this.checkDeepWildcardIsLast();
    if (this.end === source.length) {
      return { source, segments: this.segments, variables: this.variables };
    }
    return { source, segments: this.segments, variables: this.variables, verb: this.parseVerb() };
  }

  private parseSegments(): void {
    for (;;) {
      this.parseSegment();
      this.expectSegmentBoundary();
      if (this.pos < this.end && this.source[this.pos] === "/") {
        this.pos++;
        continue;
      }
      return;
    }
  }

  private parseSegment(): void {
    const { source, pos } = this;
    const c = pos < this.end ? source[pos] : undefined;
    if (c === undefined || c === "/" || c === "}") {
      this.fail(pos, "empty segment");
    }
    if (c === "{") {
      if (this.insideVariable) this.fail(pos, "variables cannot be nested");
      this.parseVariable();
      return;
    }
    if (c === "*") {
      const deep = source[pos + 1] === "*" && pos + 1 < this.end;
      this.push(deep ? { kind: "deep-wildcard" } : { kind: "wildcard" }, pos);
      this.pos += deep ? 2 : 1;
      const next = this.pos < this.end ? source[this.pos] : "/";
      if (next !== "/" && next !== "}") this.fail(pos, '"*" and "**" must be a whole segment');
      return;
    }
    let at = pos;
    while (at < this.end && !"/{}".includes(source[at] as string)) {
      if (!isLiteralChar(source[at] as string)) {
        this.fail(at, `invalid character ${JSON.stringify(source[at])} in literal`);
      }
      at++;
    }
    const value = source.slice(pos, at);
    if (value === "." || value === "..") {
      this.fail(pos, `"${value}" cannot be a segment: URL parsers remove dot segments`);
    }
    this.push({ kind: "literal", value }, pos);
    this.pos = at;
  }

  /** After a segment only `/`, the end, or a closing `}` of the enclosing variable may follow. */
  private expectSegmentBoundary(): void {
    const { pos } = this;
    if (pos >= this.end) return;
    const c = this.source[pos] as string;
    if (c === "/" || (c === "}" && this.insideVariable)) return;
    if (c === "{") {
      this.fail(pos, this.insideVariable ? "variables cannot be nested" : "a variable must be a whole segment");
    }
    if (c === "}") this.fail(pos, 'unmatched "}"');
    this.fail(pos, `invalid character ${JSON.stringify(c)} in literal`);
  }

  private parseVariable(): void {
    const { source } = this;
    const open = this.pos;
    const close = source.indexOf("}", open);
    if (close === -1 || close > this.end) this.fail(open, 'unterminated "{"');
    const fieldStart = open + 1;
    let at = fieldStart;
    while (at < close && source[at] !== "=" && source[at] !== "{") at++;
    if (source[at] === "{") this.fail(at, "variables cannot be nested");
    const fieldPath = source.slice(fieldStart, at);
    if (!FIELD_PATH.test(fieldPath)) {
      this.fail(fieldStart, `invalid field path ${JSON.stringify(fieldPath)}: expected identifiers joined by "."`);
    }
    this.checkNewField(fieldPath, fieldStart);
    const start = this.segments.length;
    if (source[at] === "=") {
      this.pos = at + 1;
      this.insideVariable = true;
      this.parseSegments();
      this.insideVariable = false;
      if (this.pos >= this.end || source[this.pos] !== "}") this.fail(open, 'unterminated "{"');
    } else {
      // `{field}` is shorthand for `{field=*}`.
      this.push({ kind: "wildcard" }, open);
      this.pos = at;
    }
    this.pos++; // the closing brace
    this.variables.push({ fieldPath, start, end: this.segments.length });
  }

  private checkNewField(fieldPath: string, position: number): void {
    for (const other of this.variables) {
      const a = other.fieldPath;
      if (a === fieldPath) this.fail(position, `field ${JSON.stringify(fieldPath)} is bound twice`);
      if (fieldPath.startsWith(`${a}.`) || a.startsWith(`${fieldPath}.`)) {
        this.fail(position, `fields ${JSON.stringify(a)} and ${JSON.stringify(fieldPath)} overlap`);
      }
    }
  }

  private checkDeepWildcardIsLast(): void {
    const last = this.segments.length - 1;
    this.segments.forEach((segment, index) => {
      if (segment.kind === "deep-wildcard" && index !== last) {
        this.fail(this.segmentPositions[index] as number, '"**" must be the last segment');
      }
    });
  }

  private parseVerb(): string {
    const start = this.end + 1;
    const verb = this.source.slice(start);
    if (verb === "") this.fail(start, 'empty custom verb after ":"');
    for (let i = 0; i < verb.length; i++) {
      if (!isLiteralChar(verb[i] as string)) {
        this.fail(start + i, `invalid character ${JSON.stringify(verb[i])} in custom verb`);
      }
    }
    return verb;
  }

  private push(segment: PathSegment, position: number): void {
    this.segments.push(segment);
    this.segmentPositions.push(position);
  }

  private fail(position: number, reason: string): never {
    throw new PathTemplateError({ template: this.source, position, reason });
  }
}

/**
 * Finds the `:` that starts the custom verb: the last one outside braces after the last top-level `/`.
 * Braces hide both, so `{name=a/*}` does not reset the search and `{a:b}` is not a verb (it then fails
 * as a field path). Unbalanced braces are left for the main parser to report.
 */
function findVerbColon(source: string): number {
  let depth = 0;
  let colon = -1;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "{") depth++;
    else if (c === "}") depth = Math.max(0, depth - 1);
    else if (depth === 0 && c === "/") colon = -1;
    else if (depth === 0 && c === ":") colon = i;
  }
  return colon === -1 ? source.length : colon;
}
