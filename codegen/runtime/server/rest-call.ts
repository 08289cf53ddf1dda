import type { ContextValues } from "@connectrpc/connect";
import type { RestOperation } from "../rest/rest-plane.js";

/**
 * A request as a handler receives it: path, query and header parameters by their document names
 * (already checked against their schemas and converted to their types), and the body.
 */
export interface RestInput {
  readonly path: Readonly<Record<string, unknown>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
}

/**
 * A request that failed validation, as an operation with `x-platform-validation: handler` receives
 * it: the values as they arrived (the body parsed when it could be), unchecked, and the first
 * problem found. Its handler tells it from a valid input by `"invalid" in input`.
 */
export interface RestInvalidInput {
  readonly invalid: {
    /** As a caller wrote it: `query.redirect_uri`, `body.email`. */
    readonly field: string;
    readonly reason: string;
    /** `field: reason`, the sentence a 400 answer would carry. */
    readonly message: string;
  };
  readonly path: Readonly<Record<string, unknown>>;
  readonly query: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body?: unknown;
}

/**
 * What a handler answers: one of the responses its operation documents. `contentType` is needed
 * only when that response has more than one media type.
 */
export interface RestResult {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string | number | undefined>>;
  readonly contentType?: string;
}

/** What a handler knows about the call besides its input. */
export interface RestCallContext<ServerVariables = Readonly<Record<string, string>>> {
  readonly operationId: string;
  /** Values of the variables in the plane's base path (`{org}/{pool}`), decoded. */
  readonly serverVariables: ServerVariables;
  readonly requestHeader: Headers;
  /** Headers added to whatever the handler answers, errors included (middleware sets CORS, rate-limit headers here). */
  readonly responseHeader: Headers;
  readonly signal: AbortSignal;
  /** What middleware found out about the caller (the authenticated principal). */
  readonly values: ContextValues;
}

/** One call on its way through the middleware to the handler. */
export interface RestCall {
  readonly operation: RestOperation;
  /**
   * The request, already validated: the schemas are public in the document, so checking them
   * before authentication reveals nothing, and middleware (a rate limit keyed by e-mail) can
   * rely on the types. Only an operation that validates in its handler sees an invalid input.
   */
  readonly input: RestInput | RestInvalidInput;
  readonly context: RestCallContext;
}

export type RestCallFn = (call: RestCall) => Promise<RestResult>;

/** Middleware is `(next) => call`: authentication, rate limits and logging wrap every operation. */
export type RestMiddleware = (next: RestCallFn) => RestCallFn;

/** What an implementation's method looks like to the runtime. */
export type RestOperationImpl = (input: RestInput | RestInvalidInput, context: RestCallContext) => Promise<RestResult>;
