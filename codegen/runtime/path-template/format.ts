import { PathTemplateError } from "./path-template-error.js";
import type { PathSegment, PathTemplate, PathVariable } from "./path-template.js";

/**
 * Prints a template in canonical form, for error messages and generated comments.
 *
 * Canonical means `{field}` instead of `{field=*}` and nothing else changed, so parsing the result
 * gives the same segments and variables. Works from the data, not `source`, because route tables built
 * by hand (tests, OpenAPI-only planes) may carry a `source` that was never parsed.
 */
export function formatPathTemplate(template: PathTemplate): string {
  const parts = mapTopLevel(template, formatSegment, (variable, pattern) =>
    pattern === "*" ? `{${variable.fieldPath}}` : `{${variable.fieldPath}=${pattern}}`,
  );
  return joinPath(parts, template.verb);
}

/**
 * The template with variables erased: `/v1/{name=shelves/*}:list` becomes `/v1/shelves/*:list`.
 *
 * Two templates with the same pattern and the same verb match exactly the same request paths, because
 * template literals cannot contain `/`, `*` or `%`; the ambiguity check relies on that.
 */
export function formatPathPattern(template: PathTemplate): string {
  return joinPath(template.segments.map(formatSegment), template.verb);
}

/** One path parameter of an OpenAPI operation: one wildcard of one template variable. */
export interface OpenApiPathParameter {
  /**
   * The name inside `{}` in the OpenAPI path: the field path (dots kept, `book.name`), with a
   * `_1`, `_2`... suffix when the variable has several wildcards.
   */
  readonly name: string;
  /** The request field the parameter helps fill, in proto field names. */
  readonly fieldPath: string;
  /**
   * The whole pattern of a multi-segment variable (`shelves/*`, `**`), for the description: the
   * field's value is the matched path text, literals included. Absent for plain `{field}`.
   */
  readonly pattern?: string;
}

/** An OpenAPI path key and the parameters its `{}` placeholders stand for, in path order. */
export interface OpenApiPath {
  readonly path: string;
  readonly parameters: readonly OpenApiPathParameter[];
}

/**
 * Turns a template into an OpenAPI path. The literals of a variable's pattern become literals of
 * the path and each wildcard a parameter, so the documented URL has the real shape:
 * `/v1/{name=shelves/*}/books` becomes `/v1/shelves/{name}/books`; a variable with several
 * wildcards gets one parameter each, suffixed `_1`, `_2`... (OpenAPI parameters cannot hold `/`,
 * and two templates differing only in names would collide).
 * `/v1/things/{thing_id}:cancel` stays as is, since OpenAPI 3.1 allows `:` in path keys.
 *
 * @throws PathTemplateError for a `*` or `**` outside any variable: it binds no field, so no parameter
 *   can describe it, and writing it literally would document a URL that does not work. Bind it to a
 *   field (`{name=*}`) instead.
 */
export function toOpenApiPath(template: PathTemplate): OpenApiPath {
  const parameters: OpenApiPathParameter[] = [];
  const parts = mapTopLevel(
    template,
    (segment) => {
      if (segment.kind === "literal") return segment.value;
      throw new PathTemplateError({
        template: template.source,
        reason: `an unnamed "${formatSegment(segment)}" cannot be described in OpenAPI; bind it to a field`,
      });
    },
    (variable, pattern) => {
      const { fieldPath } = variable;
      const segments = template.segments.slice(variable.start, variable.end);
      const wildcards = segments.filter((segment) => segment.kind !== "literal").length;
      let count = 0;
      return segments
        .map((segment) => {
          if (segment.kind === "literal") return segment.value;
          count++;
          const name = wildcards > 1 ? `${fieldPath}_${count}` : fieldPath;
          parameters.push(pattern === "*" ? { name, fieldPath } : { name, fieldPath, pattern });
          return `{${name}}`;
        })
        .join("/");
    },
  );
  return { path: joinPath(parts, template.verb), parameters };
}

/**
 * Walks the top level of a template: segments outside variables one by one, each variable once with
 * its sub-pattern printed (`shelves/*`). Both printers share it so they cannot disagree on grouping.
 */
function mapTopLevel(
  template: PathTemplate,
  onSegment: (segment: PathSegment) => string,
  onVariable: (variable: PathVariable, pattern: string) => string,
): string[] {
  const parts: string[] = [];
  let index = 0;
  while (index < template.segments.length) {
    const variable = template.variables.find((v) => v.start === index);
    if (variable === undefined) {
      parts.push(onSegment(template.segments[index] as PathSegment));
      index++;
      continue;
    }
    const pattern = template.segments.slice(variable.start, variable.end).map(formatSegment).join("/");
    parts.push(onVariable(variable, pattern));
    index = Math.max(variable.end, index + 1);
  }
  return parts;
}

function joinPath(parts: readonly string[], verb: string | undefined): string {
  return `/${parts.join("/")}${verb === undefined ? "" : `:${verb}`}`;
}

function formatSegment(segment: PathSegment): string {
  switch (segment.kind) {
    case "literal":
      return segment.value;
    case "wildcard":
      return "*";
    case "deep-wildcard":
      return "**";
  }
}
