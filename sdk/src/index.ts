// The platform SDK: one factory over generated, typed service clients.
export {
  createPlatformClient,
  type IdentityAdminClient,
  type PlatformClient,
  type PlatformClientOptions,
} from "./create-platform-client.js";
export { createIssuerClient, type IdentityIssuerClient, type IssuerClientOptions } from "./create-issuer-client.js";
export {
  defaultRetryPolicy,
  RestCallError,
  type RestCallOptions,
  type RetryPolicy,
} from "@platform/codegen/runtime/client";
export { Code, ConnectError } from "@connectrpc/connect";
export { s3Credentials, type S3Credentials } from "./s3-credentials.js";

// The generated messages, enums and service clients, one namespace per proto package:
// `scriptV1.ThreadStatus.RUNNING`, `type scriptV1.Thread`, `computeV1.createComputeServiceClient`.
export * as actionsV1 from "./messages/actions-v1.js";
export * as computeV1 from "./messages/compute-v1.js";
export * as iamV1 from "./messages/iam-v1.js";
export * as ingestV1 from "./messages/ingest-v1.js";
export * as pipelineV1 from "./messages/pipeline-v1.js";
export * as scriptV1 from "./messages/script-v1.js";
export * as sourceV1 from "./messages/source-v1.js";
export * as vectorV1 from "./messages/vector-v1.js";
export * as vectordbV1 from "./messages/vectordb-v1.js";
