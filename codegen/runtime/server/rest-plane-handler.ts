import { Code, ConnectError, createContextValues, type ContextValues } from "@connectrpc/connect";
import { parsePathTemplate, type PathTemplate } from "../path-template/index.js";
import { chooseErrorForm } from "../rest/error-body.js";
import { mediaTypeOf } from "../rest/media-type.js";
import type { RestOperation, RestPlane, RestValidationSchemas } from "../rest/rest-plane.js";
import { answerError, renderErrorForm, type ErrorRenderer } from "./error-answer.js";
import { parseBody, readParameters } from "./read-rest-input.js";
import { requestIdOf, type UnexpectedErrorHandler } from "./normalize-error.js";
import { refuseNulInJson } from "./nul-character.js";
import { InvalidRequestError } from "./invalid-request-error.js";
import {
  planeRequestOf,
  writePlaneResponse,
  type NodeRequest,
  type NodeResponse,
  type PlaneRequest,
  type PlaneResponse,
} from "./node-exchange.js";
import type {
  RestCallContext,
  RestCallFn,
  RestInput,
  RestInvalidInput,
  RestMiddleware,
  RestOperationImpl,
} from "./rest-call.js";
import { createRestExchange, type RoutedRequest } from "./rest-exchange.js";
import { createRequestValidator } from "./request-validator.js";
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
 * Serves a generated route table with an implementation of its handler interface: the exchange
 * (rest-exchange.ts) routes the request and reads its body, the same way as for the RPC routes;
 * here its path, query, headers and JSON, form or text body are checked against the document
 * (400 naming the field), then the middleware and the handler run and the typed result is
 * written. Every error, a refusal of the exchange or anything thrown, is answered by
 * `answerError` in the shape the operation's document gives its errors.
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
      return [
        operation.operationId,
        typeof method === "function" ? (method.bind(implementation) as RestOperationImpl) : undefined,
      ];
    }),
  );
  const exchange = createRestExchange(
    plane.operations.map((operation) => ({
      httpMethod: operation.httpMethod,
      template: joinTemplates(plane.basePath, operation.template),
      target: operation,
    })),
    { readMaxBytes: options.readMaxBytes },
  );
  const validator = createRequestValidator(schemas, plane.operations);
  const baseVariables = plane.basePath.variables.map((v) => v.fieldPath);
  const invoke: RestCallFn = async ({ operation, input, context }) => {
    const impl = impls.get(operation.operationId);
    if (!impl) throw new ConnectError(`${operation.operationId} is not implemented`, Code.Unimplemented);
    return impl(input, context);
  };
  const call = (options.middleware ?? []).reduceRight<RestCallFn>((next, middleware) => middleware(next), invoke);

  async function serve(
    request: PlaneRequest,
    { target: operation, captures, query, head }: RoutedRequest<RestOperation>,
  ): Promise<PlaneResponse> {
    const responseHeader = new Headers();
    const errorForm = chooseErrorForm(
      operation.errorBody,
      mediaTypeOf(request.header.get("content-type")),
      plane.errorBody,
    );
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
        refuseNulInJson(captures, "path");
        refuseNulInJson(parameters.query, "query");
        refuseNulInJson(parameters.headers, "headers");
        validator.checkParameters(operation.operationId, parameters);
      });
      const { bytes, mediaType } = await exchange.readBody(request, operation.requestBody);
      if (bytes.byteLength > 0) {
        check(() => {
          body = parseBody(mediaType, bytes);
          refuseNulInJson(body, "body");
        });
        check(() => validator.checkBody(operation.operationId, mediaType, body));
      } else if (operation.requestBody?.required) {
        check(() => {
          throw new InvalidRequestError("body", "is required");
        });
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
      const written = writeRestResult(operation, await call({ operation, input, context }), responseHeader);
      return head ? { status: written.status, header: written.header } : written;
    } catch (error) {
      return answer(request, error, operation.operationId, renderErrorForm(errorForm), responseHeader);
    }
  }

  /** Every failure of the plane, refusals of the exchange included, leaves through here. */
  function answer(
    request: PlaneRequest,
    error: unknown,
    procedure: string,
    render: ErrorRenderer,
    header?: Headers,
  ): PlaneResponse {
    const requestId = requestIdOf(request.header);
    const onUnexpected = (unexpected: unknown) => options.onUnexpectedError?.(unexpected, { procedure, requestId });
    const answered = answerError(error, { requestId, render, onUnexpected, header });
    return request.method === "HEAD" ? { status: answered.status, header: answered.header } : answered;
  }

  async function handle(request: PlaneRequest): Promise<PlaneResponse> {
    let routed: RoutedRequest<RestOperation>;
    try {
      routed = exchange.route(request);
    } catch (error) {
      // No operation is known yet: the plane's common error shape.
      return answer(request, error, `${request.method} ${request.url}`, renderErrorForm(plane.errorBody));
    }
    return serve(request, routed);
  }

  return {
    nodeHandler(fallback) {
      return (request, response) => {
        const method = request.method ?? "GET";
        if (fallback && !exchange.knowsPath(method, request.url ?? "/")) {
          fallback(request, response);
          return;
        }
        handle(planeRequestOf(request, response))
          .then((written) => writePlaneResponse(response, written))
          .catch(() => {
            // The client went away while the body was read, or mid-answer: nothing more to send.
            response.destroy();
          });
      };
    },
  };
}

/** The operation's full template: the plane's base path, then the document's path. */
function joinTemplates(base: PathTemplate, path: PathTemplate): PathTemplate {
  if (base.source === "/") return path;
  return parsePathTemplate(path.source === "/" ? base.source : `${base.source}${path.source}`);
}
