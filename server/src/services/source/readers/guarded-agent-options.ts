import type { AgentOptions } from "node:http";
import { guardedSystemLookup, PrivateNetworkError, privateHostKind } from "../../../net/private-network.js";

/**
 * node:http agent options applying the outbound-address policy, for clients built on node:http
 * rather than undici (the AWS SDK). The lookup refuses a name when any of its addresses is
 * refused, at connect time, so DNS rebinding gains nothing; an IP literal never reaches a lookup,
 * so `checkHost` refuses those before a client is made. undefined when private networks are allowed.
 */
export function guardedAgentOptions(allowPrivateNetwork: boolean): AgentOptions | undefined {
  if (allowPrivateNetwork) return undefined;
  return { lookup: guardedSystemLookup() as AgentOptions["lookup"], keepAlive: true };
}

/** Refuses a URL whose host is a refused IP literal or a local name, unless private networks are allowed. */
export function checkHost(url: URL, allowPrivateNetwork: boolean): void {
  if (allowPrivateNetwork) return;
  const why = privateHostKind(url.hostname);
  if (why !== undefined) throw new PrivateNetworkError(url.hostname, url.hostname, why);
}
