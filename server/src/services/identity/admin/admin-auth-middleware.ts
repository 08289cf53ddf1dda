import { Code, ConnectError } from "@connectrpc/connect";
import type { RestMiddleware } from "@platform/codegen/runtime/server";
import { authenticate } from "../../../auth/auth-interceptor.js";
import type { CredentialCache } from "../../../auth/credential-cache.js";
import { principalKey } from "../../../auth/principal.js";
import { holdsRole } from "../../../auth/roles.js";
import type { Database } from "../../../db/database.js";

export const IDENTITY_VIEWER_ROLE = "identity.viewer";
export const IDENTITY_ADMIN_ROLE = "identity.admin";

const organizationHeader = "x-organization-name";

/**
 * Authentication and authorization of the identity admin plane, as on the RPC planes: the route
 * table's `x-platform-auth` says whether an operation needs the platform bearer; with it, the API
 * key names the organization, reads need `identity.viewer` and everything else `identity.admin`
 * (a higher tier or `owner` does too). An `x-organization-name` header, when sent, must name the
 * key's organization: a client configured for another organization is refused, not redirected.
 *
 * With `credentials` (the api plane's cache, which `serve` keeps in step with every change of a
 * key or its grants), a key verified once is not read from the database again, exactly as on the
 * RPC routes; without it every call reads its key.
 */
export function createAdminAuthMiddleware(db: Database, credentials?: CredentialCache): RestMiddleware {
  return (next) => async (call) => {
    if (call.operation.auth === "none") return next(call);
    const principal = await authenticate(db, call.context.requestHeader.get("authorization"), credentials);
    const organization = call.context.requestHeader.get(organizationHeader)?.trim();
    if (organization && organization !== principal.orgName) {
      throw new ConnectError(
        `${organizationHeader} "${organization.slice(0, 63)}" is not the organization of this API key`,
        Code.PermissionDenied,
      );
    }
    const needed = call.operation.httpMethod === "GET" ? IDENTITY_VIEWER_ROLE : IDENTITY_ADMIN_ROLE;
    if (!holdsRole(principal.roles, needed)) {
      const held = principal.roles.size === 0 ? "no roles" : [...principal.roles].join(", ");
      throw new ConnectError(
        `${call.operation.operationId} needs the role ${needed} (or a role including it); this API key has ${held}`,
        Code.PermissionDenied,
      );
    }
    call.context.values.set(principalKey, principal);
    return next(call);
  };
}
