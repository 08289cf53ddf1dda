// The platform SDK: one factory over generated, typed service clients.
export { createPlatformClient, type PlatformClient, type PlatformClientOptions } from "./create-platform-client.js";
export { createIssuerClient, type IssuerClientOptions } from "./create-issuer-client.js";
export { defaultRetryPolicy, RestCallError, type RetryPolicy } from "@platform/codegen/runtime";
export type { IdentityAdminClient } from "../../gen/openapi/identity-admin/client.js";
export type { IdentityIssuerClient } from "../../gen/openapi/identity-issuer/client.js";
export { Code, ConnectError } from "@connectrpc/connect";
