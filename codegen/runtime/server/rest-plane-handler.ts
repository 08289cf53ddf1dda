import { Code, ConnectError, createContextValues, type ContextValues } from "@connectrpc/connect";
import { createPathMatcher, parsePathTemplate, type PathTemplate } from "../path-template/index.js";
import { chooseErrorForm, renderErrorBody } from "../rest/error-body.js";
import { contentTypeFor, mediaTypeOf } from "../rest/media-type.js";
import type { ErrorBodyForm, RestOperation, RestPlane, RestValidationSchemas } from "../rest/rest-plane.js";
import { parseBody, readParameters } from "./read-rest-input.js";
import { normalizeError, requestIdOf, type UnexpectedErrorHandler } from "./normalize-error.js";
import { findNulInJson, NUL_REASON } from "./nul-character.js";
import { InvalidRequestError } from "./invalid-request-error.js";
import { planeRequestOf, writePlaneResponse, type NodeRequest, type NodeResponse, type PlaneRequest, type PlaneResponse } from "./node-exchange.js";
import type { RestCallContext, RestCallFn, RestInput, RestInvalidInput, RestMiddleware, RestOperationImpl } from "./rest-call.js";
import { createRequestValidator } from "./request-validator.js";
import { splitRequestTarget } from "./request-target.js";
import { writeRestResult } from "./write-rest-result.js";

/** A node:http and node:http2 request listener. */
export type NodeHandlerFn = (request: NodeRequest, response: NodeResponse) => void;

export interface RestPlaneHandlerOptions {
  /** Run around every operation, first one outermost. */
  readonly middleware?: readonly RestMiddleware[];
  /** Largest request body accepted; beyond it the answer is 413. */
  readonly readMaxBytes?: number;
  /** Gets every error that is not a deliberate API error, before the caller gets a plain 500. */
  readonly onUnexpectedError?: UnexpectedErrorHandler;
  readonly contextValues?: (request: PlaneRequest) => ContextValues;
}

export interface RestPlaneHandler {
  /**
   * A node:http / node:http2 request listener. With `fallback`, requests whose path is no
   * operation's go there (another plane on the same port); without, they answer 404.
   */
  nodeHandler(fallback?: NodeHandlerFn): NodeHandlerFn;
}

/**
 * Serves a generated route table with an implementation of its handler interface: routes (404,
 * 405 with Allow), reads path, query, headers and a JSON, form or text body (415 for a media type
 * the operation does not accept), validates them (400 naming the field), runs the middleware and
 * the handler, and writes its typed result. Every error, thrown or found here, goes through one
 * normaliser and is written in the shape the operation's document gives its errors.
 */
export function createRestPlaneHandler<Implementation extends object>(
  plane: RestPlane,
  schemas: RestValidationSchemas,
  implementation: Partial<Implementation>,
  options: RestPlaneHandlerOptions = {},
): RestPlaneHandler {
  const methods = implementation as Readonly<Record<string, unknown>>;
  const impls = new Map(
    plane.operations.map((operation) => {
      const method = methods[operation.operationId];
      // The generated handler interface types each method; to the runtime they all have one shape.
      return [operation.operationId, typeof method === "function" ? (method.bind(implementation) as RestOperationImpl) : undefined];
    }),
  );
  const matcher = createPathMatcher(
    plane.operations.map((operation) => ({ httpMethod: operation.httpMethod, template: joinTemplates(plane.basePath, operation.template), target: operation })),
  );
  const validator = createRequestValidator(schemas, plane.operations);
  const readMaxBytes = options.readMaxBytes ?? 16 * 1024 * 1024;
  const baseVariables = plane.basePath.variables.map((v) => v.fieldPath);
  const invoke: RestCallFn = async ({ operation, input, context }) => {
    const impl = impls.get(operation.operationId);
    if (!impl) throw new ConnectError(`${operation.operationId} is not implemented`, Code.Unimplemented);
    return impl(input, context);
  };
  const call = (options.middleware ?? []).reduceRight<RestCallFn>((next, middleware) => middleware(next), invoke);

  async function serve(request: PlaneRequest, operation: RestOperation, captures: Record<string, string>, query: URLSearchParams): Promise<PlaneResponse> {
    const responseHeader = new Headers();
    const requestMediaType = mediaTypeOf(request.header.get("content-type"));
    const errorForm = chooseErrorForm(operation.errorBody, requestMediaType, plane.errorBody);
    try {
      const { parameters, problem } = readParameters(operation, captures, query, request.header);
      let body: unknown;
      let invalid: InvalidRequestError | undefined;
      const check = (validate: () => void) => {
        if (invalid) return;
        try {
          validate();
        } catch (error) {
          if (!(error instanceof InvalidRequestError) || !operation.handlerValidation) throw error;
          invalid = error;
        }
      };
      check(() => {
        if (problem) throw problem;
        // Every captured segment, the base path's variables ({org}/{pool}) included.
        refuseNul(captures, "path");
        refuseNul(parameters.query, "query");
        refuseNul(parameters.headers, "headers");
        validator.checkParameters(operation.operationId, parameters);
      });
      if (operation.requestBody) {
        const bytes = await request.readBody(readMaxBytes);
        if (bytes === "too-large") {
          return errorResponse(errorForm, 413, Code.ResourceExhausted, `body: exceeds ${readMaxBytes} bytes`);
        }
        if (bytes.byteLength > 0) {
          if (!operation.requestBody.contentTypes.includes(requestMediaType)) {
            const accepted = operation.requestBody.contentTypes.join(", ");
            return errorResponse(errorForm, 415, Code.InvalidArgument, `unsupported content type "${requestMediaType}": send ${accepted}`, { accept: accepted });
          }
          check(() => {
            body = parseBody(requestMediaType, bytes);
            refuseNul(body, "body");
          });
          check(() => validator.checkBody(operation.operationId, requestMediaType, body));
        } else if (operation.requestBody.required) {
          check(() => {
            throw new InvalidRequestError("body", "is required");
          });
        }
      }
      const input: RestInput | RestInvalidInput = {
        ...parameters,
        ...(body === undefined ? {} : { body }),
        ...(invalid ? { invalid: { field: invalid.field, reason: invalid.reason, message: invalid.message } } : {}),
      };
      const context: RestCallContext = {
        operationId: operation.operationId,
        serverVariables: Object.fromEntries(baseVariables.map((name) => [name, captures[name] ?? ""])),
        requestHeader: request.header,
        responseHeader,
        signal: request.signal,
        values: options.contextValues?.(request) ?? createContextValues(),
      };
      return writeRestResult(operation, await call({ operation, input, context }), responseHeader);
    } catch (error) {
      const requestId = requestIdOf(request.header);
      const normalized = normalizeError(error, requestId, (unexpected) => options.onUnexpectedError?.(unexpected, { procedure: operation.operationId, requestId }));
      normalized.headers.forEach((value, name) => responseHeader.set(name, value));
      return errorResponse(errorForm, normalized.status, normalized.code, normalized.message, responseHeader);
    }
  }

  async function handle(request: PlaneRequest): Promise<PlaneResponse> {
    const url = splitRequestTarget(request.url);
    let match = matcher.match(request.method, url.pathname);
    // HEAD is GET without the body (RFC 9110 section 9.3.2), unless the document gives it an operation.
    const head = request.method === "HEAD" && match.kind === "method-not-allowed" && match.allowedMethods.includes("GET");
    if (head) match = matcher.match("GET", url.pathname);
    switch (match.kind) {
      case "matched": {
        const answer = await serve(request, match.target, match.captures, url.searchParams);
        return head ? { status: answer.status, header: answer.header } : answer;
      }
      case "not-found":
        return errorResponse(plane.errorBody, 404, Code.NotFound, `no operation for ${request.method} ${url.pathname}`);
      case "method-not-allowed":
        return errorResponse(plane.errorBody, 405, Code.Unimplemented, `${request.method} is not allowed on ${url.pathname}; allowed: ${match.allowedMethods.join(", ")}`, {
          allow: match.allowedMethods.join(", "),
        });
      case "bad-path":
        return errorResponse(plane.errorBody, 400, Code.InvalidArgument, match.reason);
    }
  }

  return {
    nodeHandler(fallback) {
      return (request, response) => {
        const method = request.method ?? "GET";
        if (fallback && matcher.match(method, splitRequestTarget(request.url ?? "/").pathname).kind === "not-found") {
          fallback(request, response);
          return;
        }
        handle(planeRequestOf(request, response))
          .then((answer) => writePlaneResponse(response, answer))
          .catch(() => {
            // The client went away while the body was read, or mid-answer: nothing more to send.
            response.destroy();
          });
      };
    },
  };
}

/** A string holding U+0000, anywhere in a request's parameters or body, is refused naming it (see nul-character.ts). */
function refuseNul(value: unknown, root: string): void {
  const field = findNulInJson(value, root);
  if (field !== undefined) throw new InvalidRequestError(field, NUL_REASON);
}

/** The operation's full template: the plane's base path, then the document's path. */
function joinTemplates(base: PathTemplate, path: PathTemplate): PathTemplate {
  if (base.source === "/") return path;
  return parsePathTemplate(path.source === "/" ? base.source : `${base.source}${path.source}`);
}

const encoder = new TextEncoder();

function errorResponse(form: ErrorBodyForm, status: number, code: Code, message: string, headers?: HeadersInit): PlaneResponse {
  const header = new Headers(headers);
  const { mediaType, text } = renderErrorBody(form, { status, code, message });
  header.set("content-type", contentTypeFor(mediaType));
  return { status, header, body: encoder.encode(text) };
}
