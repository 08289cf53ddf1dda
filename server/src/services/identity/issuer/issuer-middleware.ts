import type { RestCall, RestMiddleware, RestResult } from "@platform/codegen/runtime/server";
import type { PoolContext } from "../pool-context.js";
import { pageBrandingOf } from "./hosted-page.js";
import { clientIpOf, issuerPoolKey, resolveIssuerPool, type IssuerDeps } from "./issuer-context.js";
import { issuerErrorResult } from "./issuer-error-result.js";
import { budgetOf, type BudgetName, type RateSubject } from "./rate-limiter.js";

/**
 * The operations that read or write users and sessions: during the locked phase of a user-store
 * migration they answer 503. Discovery, the JWKS, branding and the page GETs keep answering.
 */
const USES_USER_STORE: ReadonlySet<string> = new Set([
  "authorize",
  "token",
  "signup",
  "recoverPassword",
  "resetPassword",
  "verifyEmail",
  "logout",
  "getCurrentUser",
  "getUserInfo",
  "postUserInfo",
  "submitLogin",
]);

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
    if (!pool)
      return issuerErrorResult(operation, context.requestHeader, 404, `no pool "${poolName}" in organization "${org}"`);
    context.values.set(issuerPoolKey, pool);
    const branding = pageBrandingOf(pool.record);
    if (USES_USER_STORE.has(operation.operationId)) {
      const lock = deps.lockedForMigration(pool.record);
      if (lock) {
        return issuerErrorResult(
          operation,
          context.requestHeader,
          503,
          "the pool's user store is being migrated; retry shortly",
          {
            branding,
            headers: { "retry-after": lock.retryAfterSeconds },
          },
        );
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
  for (const stage of countsOf(call, clientIpOf(call.context))) {
    const over = await deps.limiter.hit(
      pool.ref,
      stage.map(([name, subject]) => ({ name, subject, budget: budgetOf(pool.record.policies, name) })),
    );
    if (over) {
      return issuerErrorResult(call.operation, call.context.requestHeader, 429, "too many requests; retry later", {
        branding: pageBrandingOf(pool.record),
        headers: { "retry-after": over.retryAfterSeconds },
      });
    }
  }
  return undefined;
}

type Stage = readonly (readonly [BudgetName, RateSubject])[];

/**
 * The counters a request is counted against, in stages: a stage is counted only when every
 * counter of the stages before it had budget left. So a password check refused for its client
 * address does not spend the e-mail address's budget shared by every client address, and
 * guessing (or asking for recovery mails) from one address cannot use it up for the account's owner.
 */
function countsOf(call: RestCall, ip: string): Stage[] {
  const body =
    typeof call.input.body === "object" && call.input.body !== null ? (call.input.body as Record<string, unknown>) : {};
  // The password grant may name its user `username` (RFC 6749); the other endpoints say `email`.
  const email =
    typeof body.email === "string" ? body.email : typeof body.username === "string" ? body.username : undefined;
  // Tight per address and client, then per client, and loose per address from every client.
  const threeWays = (pair: BudgetName, perIp: BudgetName, perEmail: BudgetName): Stage[] =>
    email === undefined
      ? [[[perIp, { ip }]]]
      : [
          [
            [pair, { ip, email }],
            [perIp, { ip }],
          ],
          [[perEmail, { email }]],
        ];
  const passwordCheck = () => threeWays("login", "login_ip", "login_email");
  switch (call.operation.operationId) {
    case "token":
      return [[["token", { ip }]], ...(body.grant_type === "password" ? passwordCheck() : [])];
    case "submitLogin":
      return passwordCheck();
    case "signup":
      return [[["signup", { ip }]]];
    case "recoverPassword":
      return threeWays("recover", "recover_ip", "recover_email");
    case "resetPassword":
      return [[["reset", { ip }]]];
    case "verifyEmail":
      return [[["verify", { ip }]]];
    default:
      return [];
  }
}
