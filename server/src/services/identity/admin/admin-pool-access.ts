import { Code, ConnectError } from "@connectrpc/connect";
import { principalKey, type Principal } from "../../../auth/principal.js";
import { poolContext, type IdentityServices, type PoolContext } from "../pool-context.js";
import type { PoolStore } from "../pool-store.js";
import type { IdentityAdminContext } from "../../../../../gen/openapi/identity-admin/handler.js";
import { assertPoolWritable } from "../user-store-migration/migration-lock.js";

/** What the admin operations work with. */
export interface AdminDeps {
  readonly services: IdentityServices;
  readonly pools: PoolStore;
  /** The identity plane's base URL, known once its listener runs: the pools' issuers hang off it. */
  readonly identityUrl: () => string;
}

/** The authenticated caller; the middleware sets it before any operation that needs one runs. */
export function callerOf(context: IdentityAdminContext): Principal {
  const principal = context.values.get(principalKey);
  if (!principal) throw new ConnectError("no authenticated caller for this operation", Code.Unauthenticated);
  return principal;
}

export function poolNotFound(name: string): ConnectError {
  return new ConnectError(`pool "${name}" not found`, Code.NotFound);
}

/**
 * The caller's pool by name, as a request sees it. Another organization's pool is not found, like
 * a missing one. `mutating` calls are refused with 503 and Retry-After while the pool's user store
 * is locked for a migration.
 */
export async function adminPool(
  deps: AdminDeps,
  context: IdentityAdminContext,
  name: string,
  options: { readonly mutating: boolean },
): Promise<PoolContext> {
  const caller = callerOf(context);
  const record = await deps.pools.get(caller.orgId, name);
  if (!record) throw poolNotFound(name);
  if (options.mutating) assertPoolWritable(record);
  return poolContext(deps.services, deps.identityUrl(), caller.orgName, record);
}
