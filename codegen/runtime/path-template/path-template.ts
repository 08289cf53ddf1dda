/**
 * The google.api.http path-template grammar, as data.
 *
 *     Template = "/" Segments [ Verb ] ;
 *     Segments = Segment { "/" Segment } ;
 *     Segment  = "*" | "**" | LITERAL | Variable ;
 *     Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *     FieldPath = IDENT { "." IDENT } ;
 *     Verb     = ":" LITERAL ;
 *
 * A parsed template is plain JSON-serialisable data: the generator embeds it in route tables,
 * the server compiles many of them into one matcher, and the SDK expands it into a URL.
 */
export type PathSegment =
  | { readonly kind: "literal"; readonly value: string }
  /** `*`: exactly one segment. */
  | { readonly kind: "wildcard" }
  /** `**`: zero or more segments; only as the last segment. */
  | { readonly kind: "deep-wildcard" };

export interface PathVariable {
  /** Dotted field path in the request message, in proto field names (`parent.name`). */
  readonly fieldPath: string;
  /** Index of the first segment the variable captures. */
  readonly start: number;
  /** Index one past the last segment the variable captures. */
  readonly end: number;
}

export interface PathTemplate {
  /** The template text as written in the proto. */
  readonly source: string;
  readonly segments: readonly PathSegment[];
  readonly variables: readonly PathVariable[];
  /** Custom verb after the last segment (`:cancel`), without the colon. */
  readonly verb?: string;
}

/**
 * One HTTP binding handed to the matcher: the method and template from a `google.api.http` rule and
 * whatever the caller wants back when a request hits it (a generated handler, a method descriptor).
 */
export interface PathRoute<T> {
  /** Compared case-sensitively, as HTTP method tokens are (RFC 9110 §9.1). */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  readonly target: T;
}

/**
 * Whether a variable is a "multi-segment" variable in the sense of `google/api/http.proto`.
 *
 * The spec decides percent-encoding by this: `{x}` / `{x=*}` (exactly one segment) encode and decode
 * `/` like any other character, while `{x=shelves/*}` and `{x=**}` keep `/` as the separator and
 * leave `%2F` undecoded. `**` counts as multi even alone, because it can span several segments.
 */
export function isMultiSegmentVariable(template: PathTemplate, variable: PathVariable): boolean {
  if (variable.end - variable.start !== 1) return true;
  return template.segments[variable.start]?.kind === "deep-wildcard";
}
