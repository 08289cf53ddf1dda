// The platform SDK: one factory over generated, typed service clients.
export { createPlatformClient, type PlatformClient, type PlatformClientOptions } from "./create-platform-client.js";
export { defaultRetryPolicy, type RetryPolicy } from "@platform/codegen/runtime";
export { Code, ConnectError } from "@connectrpc/connect";
