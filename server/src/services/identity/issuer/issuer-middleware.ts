import type { RestCall, RestMiddleware, RestResult } from "@platform/codegen/runtime/server";
import type { PoolContext } from "../pool-context.js";
import { pageBrandingOf } from "./hosted-page.js";
import { clientIpOf, issuerPoolKey, resolveIssuerPool, type IssuerDeps } from "./issuer-context.js";
import { issuerErrorResult } from "./issuer-error-result.js";
import { budgetOf, type BudgetName, type RateSubjects } from "./rate-limiter.js";

/**
 * The operations that read or write users and sessions: during the locked phase of a user-store
 * migration they answer 503. Discovery, the JWKS, branding and the page GETs keep answering.
 */
const USES_USER_STORE: ReadonlySet<string> = new Set(["authorize", "token", "signup", "recoverPassword", "resetPassword", "verifyEmail", "logout", "getCurrentUser", "submitLogin"]);

/**
 * Runs before every issuer operation: resolves `{org}/{pool}` (404 when unknown), refuses work on
 * a pool whose user store is locked for a migration (503), and counts the credential endpoints
 * against the pool's rate limits (429). Each answer has the shape the operation documents.
 */
export function createIssuerMiddleware(deps: IssuerDeps): RestMiddleware {
  return (next) => async (call) => {
    const { operation, context } = call;
    const { org = "", pool: poolName = "" } = context.serverVariables;
    const pool = await resolveIssuerPool(deps, org, poolName);
    if (!pool) return issuerErrorResult(operation, context.requestHeader, 404, `no pool "${poolName}" in organization "${org}"`);
    context.values.set(issuerPoolKey, pool);
    const branding = pageBrandingOf(pool.record);
    if (USES_USER_STORE.has(operation.operationId)) {
      const lock = deps.lockedForMigration(pool.record);
      if (lock) {
        return issuerErrorResult(operation, context.requestHeader, 503, "the pool's user store is being migrated; retry shortly", {
          branding,
          headers: { "retry-after": lock.retryAfterSeconds },
        });
      }
    }
    if (operation.rateLimit === "credential") {
      const limited = await countRequest(deps, call, pool);
      if (limited) return limited;
    }
    return next(call);
  };
}

async function countRequest(deps: IssuerDeps, call: RestCall, pool: PoolContext): Promise<RestResult | undefined> {
  const ip = clientIpOf(call.context);
  const body = typeof call.input.body === "object" && call.input.body !== null ? (call.input.body as Record<string, unknown>) : {};
  const email = typeof body.email === "string" ? body.email : undefined;
  const counts: [BudgetName, RateSubjects][] = [];
  switch (call.operation.operationId) {
    case "token":
      counts.push(["token", { ip }]);
      if (body.grant_type === "password") counts.push(["login", { ip, ...(email === undefined ? {} : { email }) }]);
      break;
    case "submitLogin":
      counts.push(["login", { ip, ...(email === undefined ? {} : { email }) }]);
      break;
    case "signup":
      counts.push(["signup", { ip }]);
      break;
    case "recoverPassword":
      counts.push(["recover", { ip, ...(email === undefined ? {} : { email }) }]);
      break;
    case "resetPassword":
      counts.push(["reset", { ip }]);
      break;
    case "verifyEmail":
      counts.push(["verify", { ip }]);
      break;
  }
  for (const [name, subjects] of counts) {
    const over = await deps.limiter.hit(pool.ref, name, budgetOf(pool.record.policies, name), subjects);
    if (over) {
      return issuerErrorResult(call.operation, call.context.requestHeader, 429, "too many requests; retry later", {
        branding: pageBrandingOf(pool.record),
        headers: { "retry-after": over.retryAfterSeconds },
      });
    }
  }
  return undefined;
}
