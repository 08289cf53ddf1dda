import { isFormMediaType, isJsonMediaType, isTextMediaType } from "../rest/media-type.js";
import type { RestOperation } from "../rest/rest-plane.js";
import { InvalidRequestError } from "./invalid-request-error.js";
import type { RequestParameters } from "./request-validator.js";

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The declared parameters of a request, as text: path variables from the matcher, query and header
 * parameters by name. Undeclared query parameters are ignored (OAuth clients add their own), a
 * repeated one is kept whole, and any other given twice is a problem rather than one copy silently
 * dropped (the first is kept, for a handler that validates the request itself).
 */
export function readParameters(
  operation: RestOperation,
  captures: Readonly<Record<string, string>>,
  query: URLSearchParams,
  header: Headers,
): { parameters: RequestParameters; problem: InvalidRequestError | undefined } {
  const parameters: RequestParameters = { path: {}, query: {}, headers: {} };
  let problem: InvalidRequestError | undefined;
  for (const parameter of operation.parameters) {
    switch (parameter.in) {
      case "path": {
        const value = captures[parameter.name];
        if (value !== undefined) parameters.path[parameter.name] = value;
        break;
      }
      case "query": {
        const values = query.getAll(parameter.name);
        if (values.length === 0) break;
        if (values.length > 1 && !parameter.repeated)
          problem ??= new InvalidRequestError(`query.${parameter.name}`, "must be given once");
        parameters.query[parameter.name] = parameter.repeated ? values : values[0];
        break;
      }
      case "header": {
        const value = header.get(parameter.name);
        if (value !== null) parameters.headers[parameter.name.toLowerCase()] = value;
        break;
      }
    }
  }
  return { parameters, problem };
}

/**
 * A request body in the form its media type gives it: JSON parsed, a form as an object (a field
 * given twice becomes an array; the schema decides whether that is allowed), text as a string,
 * anything else as bytes. The caller has checked that the operation accepts the media type.
 *
 * @throws InvalidRequestError for a body that is not what its media type says.
 */
export function parseBody(mediaType: string, bytes: Uint8Array): unknown {
  if (isJsonMediaType(mediaType)) {
    const text = decode(bytes);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new InvalidRequestError(
        "body",
        `is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }
  if (isFormMediaType(mediaType)) {
    const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
    for (const [name, value] of new URLSearchParams(decode(bytes))) {
      const previous = fields[name];
      fields[name] =
        previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
    }
    return fields;
  }
  if (isTextMediaType(mediaType)) return decode(bytes);
  return bytes;
}

function decode(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw new InvalidRequestError("body", "is not valid UTF-8");
  }
}
