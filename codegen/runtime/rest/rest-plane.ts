import { parsePathTemplate } from "../path-template/parse.js";
import type { PathTemplate } from "../path-template/path-template.js";

/**
 * Which credential an operation needs (`x-platform-auth`). The runtime only carries it: the
 * server's middleware decides what each value means.
 */
export type RestAuth = "none" | "pool-bearer" | "platform-bearer";

/**
 * The shape an operation's error responses take, read by the generator from the document's error
 * schemas so that errors the runtime produces itself (validation, thrown errors) look exactly like
 * the ones the handler returns:
 * - `oauth`: RFC 6749 section 5.2, `{error: <code>, error_description: <message>}`;
 * - `error`: `{error: <message>}`;
 * - `code-message`: `{code, message}` with the Connect code name;
 * - `message`: `{message}`;
 * - `text`: the message as a plain-text body;
 * - `html`: a minimal HTML page with the message (for hosted pages; a handler renders its own).
 */
export type ErrorBodyForm = "oauth" | "error" | "code-message" | "message" | "text" | "html";

/** One declared parameter outside the body. */
export interface RestParameter {
  readonly name: string;
  readonly in: "path" | "query" | "header";
  readonly required: boolean;
  /** A query parameter whose schema is an array: every occurrence is kept, in order. */
  readonly repeated: boolean;
}

/** One documented response. */
export interface RestResponseSpec {
  /** The HTTP status, or `"default"` for the document's catch-all response. */
  readonly status: number | "default";
  /** Media types the body may be sent as, in document order; empty for a response without body. */
  readonly contentTypes: readonly string[];
  readonly headers: readonly RestHeaderSpec[];
}

/** A documented response header. */
export interface RestHeaderSpec {
  /** Lower case. */
  readonly name: string;
  /** Its schema is a number or an integer: the SDK converts the text. */
  readonly numeric?: true;
}

/** One operation of a plane, as data. */
export interface RestOperation {
  /** The handler and SDK method name. */
  readonly operationId: string;
  readonly httpMethod: string;
  /** The document's path, relative to the plane's base path. */
  readonly template: PathTemplate;
  readonly parameters: readonly RestParameter[];
  /** Absent when the operation takes no body. */
  readonly requestBody?: {
    readonly required: boolean;
    /** Accepted media types, in document order. */
    readonly contentTypes: readonly string[];
  };
  readonly responses: readonly RestResponseSpec[];
  readonly auth: RestAuth;
  /** `credential` on the endpoints that accept credentials and are rate limited for it. */
  readonly rateLimit?: "credential";
  /**
   * `x-platform-validation: handler`: a request that fails validation still reaches the handler,
   * marked invalid, because its answer must be a redirect, a page or a specific protocol error.
   */
  readonly handlerValidation?: true;
  /**
   * The shapes its error responses take, in document order. When it offers both JSON and HTML, a
   * form post gets HTML and anything else the JSON shape.
   */
  readonly errorBody: readonly ErrorBodyForm[];
}

/**
 * Every operation of one REST-only plane, generated from its OpenAPI document. The server compiles
 * it into a router and the SDK builds URLs from it, so neither can drift from the document.
 */
export interface RestPlane {
  /** The document's name (`identity-admin`). */
  readonly name: string;
  /**
   * The path every operation is under, from the document's server URL (`/v1/identity`, or
   * `/{org}/{pool}` whose variables the caller fills); `/` when there is none.
   */
  readonly basePath: PathTemplate;
  /** The error shape used when no operation is known yet (404, 405): the plane's common one. */
  readonly errorBody: ErrorBodyForm;
  readonly operations: readonly RestOperation[];
}

/** A plane as its generated route table writes it: the base path and templates as their text. */
export interface RestPlaneSource extends Omit<RestPlane, "basePath" | "operations"> {
  readonly basePath: string;
  readonly operations: readonly (Omit<RestOperation, "template"> & { readonly template: string })[];
}

/**
 * The route table of a plane, its base path and templates parsed once, when the generated module
 * loads. The generator parsed every one with the same parser before writing it, so this cannot
 * throw for a generated table.
 */
export function defineRestPlane(source: RestPlaneSource): RestPlane {
  return {
    ...source,
    basePath: parsePathTemplate(source.basePath),
    operations: source.operations.map((operation) => ({
      ...operation,
      template: parsePathTemplate(operation.template),
    })),
  };
}

/**
 * The JSON Schemas (2020-12) that requests are validated against, as one document: the
 * components, and per operation `<operationId>.parameters` (an object of `path`, `query` and
 * `headers`) and `<operationId>.body`. Every `$ref` points into `$defs`.
 */
export interface RestValidationSchemas {
  readonly $id: string;
  readonly $defs: Readonly<Record<string, object | boolean>>;
}

/** The `$defs` key of an operation's parameter schema; the generator and the server agree on it here. */
export function parametersSchemaKey(operationId: string): string {
  return `${operationId}.parameters`;
}

/** The `$defs` key of an operation's request body schema. */
export function bodySchemaKey(operationId: string): string {
  return `${operationId}.body`;
}
