import {
  createIdentityAdminHandler,
  type IdentityAdminImplementation,
} from "../../../../../gen/openapi/identity-admin/handler.js";
import type { RestMiddleware, RestPlaneHandler } from "@platform/codegen/runtime/server";
import type { CredentialCache } from "../../../auth/credential-cache.js";
import type { PageTokenSigner } from "../../../pagination/page-token-signer.js";
import type { Logger } from "../../../log/logger.js";
import { createAdminAuthMiddleware } from "./admin-auth-middleware.js";
import type { PoolCache } from "../pool-cache.js";
import { principalKey } from "../../../auth/principal.js";
import type { AdminDeps } from "./admin-pool-access.js";
import { createConnectionHandlers } from "./connection-handlers.js";
import { createPoolHandlers } from "./pool-handlers.js";
import { createTenantHandlers } from "./tenant-handlers.js";
import { createUserHandlers } from "./user-handlers.js";
import { createUserStoreHandlers } from "./user-store-handlers.js";

/** Every operation of the identity admin API, by group. */
export function createIdentityAdminImplementation(deps: AdminDeps): IdentityAdminImplementation {
  return {
    ...createPoolHandlers(deps),
    ...createConnectionHandlers(deps),
    ...createUserHandlers(deps),
    ...createTenantHandlers(deps),
    ...createUserStoreHandlers(deps),
  };
}

/**
 * After any write under `/pools/{pool}` (whether it succeeded or not), the issuer's cached view of
 * that pool is dropped, so the next issuer request in this process reads it as it is now.
 */
function forgetWrittenPools(cache: PoolCache): RestMiddleware {
  return (next) => async (call) => {
    const pool = call.input.path.pool;
    const caller = call.context.values.get(principalKey);
    if (call.operation.httpMethod === "GET" || typeof pool !== "string" || !caller) return next(call);
    try {
      return await next(call);
    } finally {
      cache.forget(caller.orgName, pool);
    }
  };
}

/**
 * The identity admin plane (`{api_url}/v1/identity`), authenticated like the RPC planes. Mounted
 * on the api listener in front of the RPC router: requests outside its routes fall through.
 */
export interface IdentityAdminPlaneOptions {
  readonly logger: Logger;
  readonly readMaxBytes: number;
  /** Signs the lists' `nextCursor` and verifies a `cursor` before any handler reads it. */
  readonly pageTokens: PageTokenSigner;
  /**
   * Verified API keys shared with the RPC routes' auth interceptor, followed by
   * `followCredentialChanges`; without it every call reads its key from the database.
   */
  readonly credentials?: CredentialCache;
}

export function createIdentityAdminPlane(deps: AdminDeps, options: IdentityAdminPlaneOptions): RestPlaneHandler {
  return createIdentityAdminHandler(createIdentityAdminImplementation(deps), {
    middleware: [
      options.pageTokens.middleware,
      createAdminAuthMiddleware(deps.services.db, options.credentials),
      forgetWrittenPools(deps.services.poolCache),
    ],
    readMaxBytes: options.readMaxBytes,
    onUnexpectedError: (error, where) => options.logger.error("identity admin operation failed", { ...where, error }),
  });
}
