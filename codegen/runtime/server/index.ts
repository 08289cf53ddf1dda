// Node-only part of the runtime: serving registered services over every protocol, and REST planes.
export {
  createRestHandler,
  createRestNodeHandler,
  type RestHandlerOptions,
  type RestRouteTarget,
} from "./rest-handler.js";
export { createServiceRouter, type ServiceRouter, type ServiceRouterOptions } from "./service-router.js";
export type { NodeRequest, NodeResponse } from "./node-exchange.js";
export {
  createRestPlaneHandler,
  type NodeHandlerFn,
  type RestPlaneHandler,
  type RestPlaneHandlerOptions,
} from "./rest-plane-handler.js";
export type {
  RestCall,
  RestCallContext,
  RestCallFn,
  RestInput,
  RestInvalidInput,
  RestMiddleware,
  RestResult,
} from "./rest-call.js";
export { InvalidRequestError } from "./invalid-request-error.js";
export { createComponentValidator, type ComponentValidator } from "./component-validator.js";
export {
  internalErrorMessage,
  normalizeError,
  requestIdOf,
  toApiError,
  type NormalizedError,
  type UnexpectedErrorContext,
  type UnexpectedErrorHandler,
} from "./normalize-error.js";
export { findNulInJson, NUL_REASON } from "./nul-character.js";
export { answerError, renderConnectError, type ErrorAnswer, type ErrorRenderer } from "./error-answer.js";
export { bodyTooLarge } from "./rest-exchange.js";
