import { composeRecovery } from "../account-flows.js";
import type { ComposeRequest } from "../mail-outbox.js";
import { resolveIssuerPoolByRef, type IssuerDeps } from "./issuer-context.js";

/**
 * Composes the reset mails POST /recover queued, in the mail delivery loop: the pool as the issuer
 * sees it, its user looked up by the address. A pool deleted since has nobody to mail; a pool whose
 * user store is locked for a migration is asked again on a later round.
 */
export function createRecoveryComposer(deps: IssuerDeps): ComposeRequest {
  return async (ref, request) => {
    const pool = await resolveIssuerPoolByRef(deps, ref);
    if (!pool) return undefined;
    if (deps.lockedForMigration(pool.record)) throw new Error("the pool's user store is locked for a migration");
    return composeRecovery(deps.services, pool, request.to);
  };
}
