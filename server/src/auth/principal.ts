import { Code, ConnectError, createContextKey, type HandlerContext } from "@connectrpc/connect";

/** The authenticated caller of a request, set by the auth interceptor for every protocol. */
export interface Principal {
  /** The organization the credential belongs to: every store query is scoped to it. */
  readonly orgId: string;
  readonly orgName: string;
  /** The API key that authenticated the call. */
  readonly keyId: string;
  /** Roles granted to the key, organization-wide. */
  readonly roles: ReadonlySet<string>;
}

export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "the authenticated caller",
});

/** The caller of an authenticated method; a handler never runs without one, so absence is a server bug. */
export function principalOf(context: HandlerContext): Principal {
  const principal = context.values.get(principalKey);
  if (!principal) throw new ConnectError("no authenticated caller for this method", Code.Unauthenticated);
  return principal;
}
