import type { NodeRequest } from "../../../transport/plane-handler.js";

/** The service name tokens are issued for and checked against. */
export function registryService(req: NodeRequest): string {
  const host = req.headers.host ?? req.headers[":authority"];
  return typeof host === "string" && /^[A-Za-z0-9.:[\]-]{1,255}$/.test(host) ? host : "registry";
}

/**
 * The `WWW-Authenticate` challenge of a 401: where to get a token (this listener's /token, at the
 * address the client used), for which service, and the scope the refused request needed.
 */
export function challenge(req: NodeRequest, scope: string | undefined): string {
  const service = registryService(req);
  const realm = `http://${service}/token`;
  return `Bearer realm="${realm}",service="${service}"${scope ? `,scope="${scope}"` : ""}`;
}
