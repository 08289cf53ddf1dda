import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import { and, eq, sql } from "drizzle-orm";
import type { IdentityIssuerContext } from "../../../../../gen/openapi/identity-issuer/handler.js";
import { perDatabase } from "../../../db/prepared-statements.js";
import { organizations } from "../../../auth/auth-schema.js";
import { identityPools } from "../identity-schema.js";
import type { LoginTransactions } from "../login-transactions.js";
import { poolContext, type IdentityServices, type PoolContext } from "../pool-context.js";
import type { PoolRecord, PoolRef } from "../pool-store.js";
import type { RateLimiter } from "./rate-limiter.js";

/** What every issuer operation works with, made once when the server starts. */
export interface IssuerDeps {
  readonly services: IdentityServices;
  readonly transactions: LoginTransactions;
  readonly limiter: RateLimiter;
  /** `{identity_url}`: the public base of every pool's issuer (known once the listener is bound). */
  readonly identityUrl: () => string;
  /** Whether the pool's user store is in the locked phase of a migration, and for how long to wait. */
  readonly lockedForMigration: (record: PoolRecord) => { readonly retryAfterSeconds: number } | undefined;
}

/** The pool of the request, resolved once by the middleware from `{org}/{pool}`. */
export const issuerPoolKey = createContextKey<PoolContext | undefined>(undefined, {
  description: "identity issuer pool",
});

/** Client address as the identity listener saw it; set by the listener, never taken from the client. */
export const CLIENT_IP_HEADER = "x-platform-client-ip";

const poolByName = perDatabase((db) =>
  db
    .select({ pool: identityPools })
    .from(identityPools)
    .innerJoin(organizations, eq(organizations.id, identityPools.orgId))
    .where(and(eq(organizations.name, sql.placeholder("org")), eq(identityPools.name, sql.placeholder("pool"))))
    .prepare("identity_pool_by_name"),
);

/**
 * Resolves `{org}/{pool}`: from the pool cache, or in one query (the organization by name, the
 * pool by name within it). Another organization's pool of the same name is simply not found.
 */
export function resolveIssuerPool(deps: IssuerDeps, org: string, pool: string): Promise<PoolContext | undefined> {
  const { services } = deps;
  return services.poolCache.resolve(org, pool, async () => {
    const [row] = await poolByName(services.db).execute({ org, pool });
    return row ? poolContext(services, deps.identityUrl(), org, row.pool) : undefined;
  });
}

/** A pool by its ids, for work done outside a request; resolved and cached as a request's would be. */
export async function resolveIssuerPoolByRef(deps: IssuerDeps, ref: PoolRef): Promise<PoolContext | undefined> {
  const [names] = await deps.services.db
    .select({ org: organizations.name, pool: identityPools.name })
    .from(identityPools)
    .innerJoin(organizations, eq(organizations.id, identityPools.orgId))
    .where(and(eq(identityPools.orgId, ref.orgId), eq(identityPools.id, ref.poolId)));
  return names ? resolveIssuerPool(deps, names.org, names.pool) : undefined;
}

/** The request's pool; the middleware answered 404 already when there is none. */
export function poolOf(context: IdentityIssuerContext): PoolContext {
  const pool = context.values.get(issuerPoolKey);
  if (!pool) throw new ConnectError("the pool was not resolved", Code.Internal);
  return pool;
}

export function clientIpOf(context: Pick<IdentityIssuerContext, "requestHeader">): string {
  return context.requestHeader.get(CLIENT_IP_HEADER) ?? "unknown";
}

/** Whether the request is a hosted page's form post, which is answered with a page. */
export function isFormPost(context: Pick<IdentityIssuerContext, "requestHeader">): boolean {
  return (context.requestHeader.get("content-type") ?? "")
    .toLowerCase()
    .startsWith("application/x-www-form-urlencoded");
}
