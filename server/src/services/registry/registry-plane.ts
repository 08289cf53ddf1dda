import type { BlobStore } from "../../blob/blob-store.js";
import type { Logger } from "../../log/logger.js";
import type { NodeRequest, NodeResponse, NodeRequestHandler } from "../../transport/plane-handler.js";
import type { RegistryAccessOptions } from "./access/registry-access.js";
import { createTokenEndpoint } from "./access/token-endpoint.js";
import { createOciRouter } from "./oci/oci-router.js";
import { answer } from "./oci/oci-response.js";

export interface RegistryPlaneOptions extends RegistryAccessOptions {
  readonly blobs: BlobStore;
  readonly logger: Logger;
  /** The control plane (`/{org}/...`); without it those paths are 404. */
  readonly controlPlane?: NodeRequestHandler;
}

/** The registry listener: the OCI plane under /v2, the token endpoint, /health and the control plane. */
export function createRegistryPlane(options: RegistryPlaneOptions): NodeRequestHandler {
  const oci = createOciRouter(options);
  const token = createTokenEndpoint(options);
  const { logger } = options;
  const serve = async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]!;
    res.setHeader("docker-distribution-api-version", "registry/2.0");
    if (path === "/v2" || path.startsWith("/v2/")) return oci(req, res);
    if (path === "/token") return token(req, res);
    if (path === "/health")
      return answer(res, 200, { "content-type": "application/json" }, { status: "ok", service: "registry" });
    if (options.controlPlane) return options.controlPlane(req, res);
    answer(res, 404, { "content-type": "text/plain; charset=utf-8" }, "not found\n");
  };
  return (req, res) => {
    serve(req, res).catch((error: unknown) => {
      logger.error("registry request failed", { error });
      if (!res.headersSent) answer(res, 500, { "content-type": "text/plain; charset=utf-8" }, "internal error\n");
      else res.destroy();
    });
  };
}
