import { createRegistryHandler } from "../../../../../gen/openapi/registry/handler.js";
import type { RestPlaneHandler } from "@platform/codegen/runtime/server";
import type { Logger } from "../../../log/logger.js";
import type { RegistryAccessOptions } from "../access/registry-access.js";
import { createControlAuth } from "./control-auth.js";
import { createRegistryControlHandlers } from "./registry-control-handlers.js";

/** The registry's control plane (`/health`, `/{org}/...`), generated from openapi/registry.yaml. */
export function createRegistryControlPlane(
  options: RegistryAccessOptions & { readonly logger: Logger; readonly readMaxBytes: number },
): RestPlaneHandler {
  return createRegistryHandler(createRegistryControlHandlers(options.db), {
    middleware: [createControlAuth(options)],
    readMaxBytes: options.readMaxBytes,
    onUnexpectedError: (error, where) => options.logger.error("registry control operation failed", { ...where, error }),
  });
}
