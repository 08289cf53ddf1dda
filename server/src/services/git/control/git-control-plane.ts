import { createGitHandler } from "../../../../../gen/openapi/git/handler.js";
import type { RestPlaneHandler } from "@platform/codegen/runtime/server";
import type { Logger } from "../../../log/logger.js";
import { createGitControlAuth } from "./git-control-auth.js";
import { createGitControlHandlers, type GitControlOptions } from "./git-control-handlers.js";

/** Request bodies of the control plane are small JSON documents (an SSH key is the largest). */
const CONTROL_BODY_MAX_BYTES = 64 * 1024;

/** The git control plane under `/api/v1`, generated from openapi/git.yaml. */
export function createGitControlPlane(options: GitControlOptions & { readonly logger: Logger }): RestPlaneHandler {
  return createGitHandler(createGitControlHandlers(options), {
    middleware: [createGitControlAuth(options)],
    readMaxBytes: CONTROL_BODY_MAX_BYTES,
    onUnexpectedError: (error, where) => options.logger.error("git control operation failed", { ...where, error }),
  });
}
