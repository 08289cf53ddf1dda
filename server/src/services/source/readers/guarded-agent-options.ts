import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import type { AgentOptions } from "node:http";
import { PrivateNetworkError, privateAddressKind, privateHostKind } from "../../../net/private-network.js";

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * node:http agent options applying the outbound-address policy, for clients built on node:http
 * rather than undici (the AWS SDK). The lookup refuses a name when any of its addresses is
 * refused, at connect time, so DNS rebinding gains nothing; an IP literal never reaches a lookup,
 * so `checkHost` refuses those before a client is made. undefined when private networks are allowed.
 */
export function guardedAgentOptions(allowPrivateNetwork: boolean): AgentOptions | undefined {
  if (allowPrivateNetwork) return undefined;
  const lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }).then(
      (addresses) => {
        for (const { address } of addresses) {
          const why = privateAddressKind(address);
          if (why !== undefined) return callback(new PrivateNetworkError(hostname, address, why), "");
        }
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
  return { lookup: lookup as AgentOptions["lookup"], keepAlive: true };
}

/** Refuses a URL whose host is a refused IP literal or a local name, unless private networks are allowed. */
export function checkHost(url: URL, allowPrivateNetwork: boolean): void {
  if (allowPrivateNetwork) return;
  const why = privateHostKind(url.hostname);
  if (why !== undefined) throw new PrivateNetworkError(url.hostname, url.hostname, why);
}
