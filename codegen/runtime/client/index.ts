// The outbound half of the runtime: everything the generated SDK clients (`*_client.ts`, and the
// REST planes' client.ts, routes.ts and types.ts) import from "@platform/codegen/runtime", and
// nothing of the server's. The SDK's package build resolves that import here, so the published
// bundle and its types carry only the client runtime. Browser-safe.
export type { ClientMethodFacts } from "./client-method-facts.js";
export { createServiceClient, type ServiceClientOptions } from "./create-service-client.js";
export { defaultRetryPolicy, retryDelayMs, type RetryPolicy } from "./retry-policy.js";
export {
  createRestClient,
  type RestAnswerBody,
  type RestBodyClient,
  type RestCallOptions,
  type RestClientOptions,
} from "./create-rest-client.js";
export { RestCallError } from "./rest-call-error.js";
export type {
  ErrorBodyForm,
  RestAuth,
  RestHeaderSpec,
  RestOperation,
  RestParameter,
  RestPlane,
  RestPlaneSource,
  RestResponseSpec,
} from "../rest/rest-plane.js";
export { defineRestPlane } from "../rest/rest-plane.js";
export type { HttpErrorStatus } from "../rest/http-error-status.js";
