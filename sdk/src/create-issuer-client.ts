import {
  createRestClient,
  type RestBodyClient,
  type RestClientOptions,
  type RetryPolicy,
} from "@platform/codegen/runtime/client";
import type { IdentityIssuerClient as IdentityIssuerResultClient } from "../../gen/openapi/identity-issuer/client.js";
import { IdentityIssuerRoutes } from "../../gen/openapi/identity-issuer/routes.js";

/**
 * A client of one identity pool's issuer. Each method resolves to the body of its success (the
 * discovery document, the JWKS, the token response, a page's HTML) and throws RestCallError for
 * any other answer; a redirect (`authorize`, the login form) resolves to `{ location }`.
 */
export type IdentityIssuerClient = RestBodyClient<IdentityIssuerResultClient>;

export interface IssuerClientOptions {
  /** Base URL of the identity plane (`{identity_url}`), without the organization and pool. */
  readonly identityUrl: string;
  /** The organization's name. */
  readonly org: string;
  /** The pool's name. */
  readonly pool: string;
  /**
   * A pool access token, for the operations that take one (`getCurrentUser`); a function is asked
   * before each call so a caller can refresh it. Never the platform credential.
   */
  readonly token?: RestClientOptions["token"];
  /** A custom fetch, for proxies, mTLS or tests. */
  readonly fetch?: typeof globalThis.fetch;
  /** Retries of idempotent calls (GET) on 429 and 503; `false` turns them off. */
  readonly retry?: Partial<RetryPolicy> | false;
}

/**
 * A client of one identity pool's issuer, `{identity_url}/{org}/{pool}`: discovery, keys, the
 * token endpoint, account flows and the signed-in user. It needs no platform credential, so a
 * login page or an app's backend can use it on its own.
 */
export function createIssuerClient(options: IssuerClientOptions): IdentityIssuerClient {
  return createRestClient<IdentityIssuerClient>(IdentityIssuerRoutes, {
    baseUrl: options.identityUrl,
    serverVariables: { org: options.org, pool: options.pool },
    answer: "body",
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
  });
}
