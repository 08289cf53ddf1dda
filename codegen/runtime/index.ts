// The runtime that generated code calls: used by the server for inbound requests and by the
// SDK for outbound ones. Browser-safe except ./server/*, which needs Node.
export {
  defineHttpRoutes,
  type HttpRoute,
  type HttpRouteSource,
  type ServiceAccess,
  type ServiceHttpRoutes,
  type StreamFraming,
} from "./http-route.js";
export type { ServiceBinding, ServiceRegistrar } from "./service-registrar.js";
export type { ClientMethodFacts } from "./client/client-method-facts.js";
export { createServiceClient, type ServiceClientOptions } from "./client/create-service-client.js";
export { defaultRetryPolicy, retryDelayMs, type RetryPolicy } from "./client/retry-policy.js";
export * from "./path-template/index.js";
export { decodeRequest, type HttpRequestParts } from "./transcode/decode-request.js";
export { encodeResponse } from "./transcode/encode-response.js";
export { queryToJson } from "./transcode/query-to-json.js";
export { errorEnvelope, type ErrorEnvelope } from "./errors/error-envelope.js";
export { sseError, sseHeartbeat, sseMediaType, sseMessage, parseSse, type SseEvent } from "./stream-framing/sse.js";
export { ndjsonError, ndjsonMediaType, ndjsonMessage, parseNdjson } from "./stream-framing/ndjson.js";
export type {
  ErrorBodyForm,
  RestAuth,
  RestHeaderSpec,
  RestOperation,
  RestParameter,
  RestPlane,
  RestPlaneSource,
  RestResponseSpec,
  RestValidationSchemas,
} from "./rest/rest-plane.js";
export type { HttpErrorStatus } from "./rest/http-error-status.js";
export { bodySchemaKey, defineRestPlane, parametersSchemaKey } from "./rest/rest-plane.js";
export {
  createRestClient,
  type RestAnswerBody,
  type RestBodyClient,
  type RestCallOptions,
  type RestClientOptions,
} from "./client/create-rest-client.js";
export { RestCallError } from "./client/rest-call-error.js";
export { codeFromHttpStatus } from "./errors/code-from-http-status.js";
