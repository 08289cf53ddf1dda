import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import type { RestCallContext, RestMiddleware } from "@platform/codegen/runtime/server";
import { holdsRole } from "../../../auth/roles.js";
import { identifyCaller, type RegistryAccessOptions } from "../access/registry-access.js";
import { OciError } from "../oci/oci-error.js";

/** The organization key behind a control-plane call. */
export interface ControlCaller {
  readonly orgId: string;
  readonly orgName: string;
}

const callerKey = createContextKey<ControlCaller | undefined>(undefined, {
  description: "the registry control plane's caller",
});

/** Operations that change settings need `registry.admin`; deletes `registry.developer`; reads `registry.reader`. */
const settingsOperations = new Set(["setVisibility", "setTagImmutability", "setQuota"]);

/**
 * Authenticates a control-plane call as the OCI plane does (an API key over Basic or Bearer; a
 * registry token is for the OCI plane only), checks the role the operation needs, and refuses a
 * `{org}` that is not the key's own organization as not found, like any unknown one.
 */
export function createControlAuth(options: RegistryAccessOptions): RestMiddleware {
  return (next) => async (call) => {
    if (call.operation.auth === "none") return next(call);
    const caller = await identifyCaller(options, call.context.requestHeader.get("authorization") ?? undefined).catch(
      (error: unknown) => {
        throw error instanceof OciError ? new ConnectError(error.message, Code.Unauthenticated) : error;
      },
    );
    if (caller.kind !== "key" || caller.tokenScopes) {
      throw new ConnectError(
        "authentication required: send an API key over HTTP Basic or as a Bearer token",
        Code.Unauthenticated,
      );
    }
    const org = call.input.path.org;
    if (org !== caller.orgName)
      throw new ConnectError(`organization ${String(org).slice(0, 63)} not found`, Code.NotFound);
    const { operationId, httpMethod } = call.operation;
    const needed = settingsOperations.has(operationId)
      ? "registry.admin"
      : httpMethod === "GET"
        ? "registry.reader"
        : "registry.developer";
    if (!holdsRole(caller.roles, needed)) {
      throw new ConnectError(`${operationId} needs the role ${needed} (or a role including it)`, Code.PermissionDenied);
    }
    call.context.values.set(callerKey, { orgId: caller.orgId, orgName: caller.orgName });
    return next(call);
  };
}

export function controlCaller(context: Pick<RestCallContext, "values">): ControlCaller {
  const caller = context.values.get(callerKey);
  if (!caller) throw new ConnectError("no authenticated caller", Code.Unauthenticated);
  return caller;
}
