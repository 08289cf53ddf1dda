import { PathTemplateError } from "./path-template-error.js";
import { type PathSegment, type PathTemplate, type PathVariable, isMultiSegmentVariable } from "./path-template.js";
import { encodePathSegment } from "./percent-encoding.js";

/**
 * Builds the request path for a template on the client side, so the server's matcher gives back
 * exactly the values passed in.
 *
 * Encoding follows `google/api/http.proto`: a single-segment variable (`{x}`) percent-encodes everything
 * but RFC 3986 unreserved characters, `/` included; a multi-segment variable (`{x=shelves/*}`, `{x=**}`)
 * keeps `/` as the separator and encodes each part the same way. Literal parts of a variable's pattern
 * are written as they are in the template, because the server compares literals unencoded.
 *
 * The value is checked against the variable's pattern before anything is sent, so a wrong resource
 * name (`books/1` where `shelves/*` is expected) fails here with the field named, instead of as a 404
 * from a server that cannot tell a typo from a missing resource.
 *
 * @param valueOf the request's value for a field path; `undefined` when the field is unset.
 * @throws PathTemplateError naming the field when a value is missing or empty, does not fit the
 *   pattern, has a `.` or `..` segment (every URL parser, `fetch` included, would remove it), or is not
 *   well-formed Unicode; also for a `*` or `**` outside any variable, which no field can fill.
 */
export function expandPathTemplate(template: PathTemplate, valueOf: (fieldPath: string) => string | undefined): string {
  const parts: string[] = [];
  let index = 0;
  while (index < template.segments.length) {
    const variable = template.variables.find((v) => v.start === index);
    if (variable !== undefined) {
      parts.push(expandVariable(template, variable, valueOf(variable.fieldPath)));
      index = Math.max(variable.end, index + 1);
      continue;
    }
    const segment = template.segments[index] as PathSegment;
    if (segment.kind !== "literal") {
      throw new PathTemplateError({
        template: template.source,
        reason: `segment ${index + 1} is a wildcard outside any variable, so no field supplies its value`,
      });
    }
    parts.push(segment.value);
    index++;
  }
  return `/${parts.join("/")}${template.verb === undefined ? "" : `:${template.verb}`}`;
}

function expandVariable(template: PathTemplate, variable: PathVariable, value: string | undefined): string {
  // Annotated so that calls narrow like `throw` does.
  const fail: (reason: string) => never = (reason) => {
    throw new PathTemplateError({ template: template.source, fieldPath: variable.fieldPath, reason });
  };
  if (value === undefined) fail("no value: the field is part of the URL path and must be set");
  if (value === "") fail("empty value: the field is part of the URL path and must be non-empty");
  const pattern = template.segments.slice(variable.start, variable.end);
  // A single-segment value is one part even if it contains "/": it is sent as `%2F`.
  const values = isMultiSegmentVariable(template, variable) ? value.split("/") : [value];
  const fitted = fitPattern(pattern, values);
  if (fitted === undefined) {
    fail(`value ${JSON.stringify(value)} does not match the pattern ${JSON.stringify(describePattern(pattern))}`);
  }
  return fitted.map((part) => encodePart(part, fail)).join("/");
}

/** A part of a value: either equal to a pattern literal (sent as written) or filling a wildcard. */
interface Part {
  readonly literal: boolean;
  readonly text: string;
}

/** Lines the value's parts up with the pattern; `undefined` when they cannot be. */
function fitPattern(pattern: readonly PathSegment[], values: readonly string[]): Part[] | undefined {
  const parts: Part[] = [];
  let next = 0;
  for (const segment of pattern) {
    if (segment.kind === "deep-wildcard") {
      // `**` is always last and takes the rest, possibly nothing.
      for (; next < values.length; next++) parts.push({ literal: false, text: values[next] as string });
      break;
    }
    const text = values[next++];
    if (text === undefined) return undefined;
    if (segment.kind === "literal" && text !== segment.value) return undefined;
    parts.push({ literal: segment.kind === "literal", text });
  }
  if (next !== values.length) return undefined;
  // An empty part would make `//` or a trailing `/`, which no route matches.
  return parts.some((part) => part.text === "") ? undefined : parts;
}

function encodePart(part: Part, fail: (reason: string) => never): string {
  if (part.literal) return part.text;
  if (part.text === "." || part.text === "..") {
    fail(`${JSON.stringify(part.text)} cannot be sent as a path segment: URL parsers remove dot segments`);
  }
  try {
    return encodePathSegment(part.text);
  } catch {
    return fail("value is not well-formed Unicode (it contains a lone surrogate)");
  }
}

function describePattern(pattern: readonly PathSegment[]): string {
  return pattern
    .map((segment) => (segment.kind === "literal" ? segment.value : segment.kind === "wildcard" ? "*" : "**"))
    .join("/");
}
