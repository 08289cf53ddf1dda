import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress, LookupOptions } from "node:dns";
import { Agent, buildConnector } from "undici";
import type { Dispatcher } from "undici";
import { privateAddressKind, type AddressPolicy } from "./address-policy.js";

/**
 * Outbound requests made for a user (http.request, thread callbacks) go through this guard, which
 * refuses what the address policy (address-policy.ts) refuses, on the first request and every
 * redirect hop, unless the operator allows private networks (--allow-private-network, for development).
 */
export { privateAddressKind };

/**
 * Whether a URL's host is refused before any lookup: an IP literal in a refused range (with or
 * without IPv6 brackets) or a `localhost` name. A name that resolves to such an address is caught
 * at connect time by the guarded dispatcher.
 */
export function isPrivateHost(hostname: string): boolean {
  return privateHostKind(hostname) !== undefined;
}

/** Why a URL's host is refused before any lookup, as privateAddressKind, or `a local name`. */
export function privateHostKind(hostname: string): string | undefined {
  const host = (hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname).toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "localhost.") return "a local name";
  return privateAddressKind(host);
}

/** A connection refused by the policy; fetch and undici's request carry it as their error's cause. */
export class PrivateNetworkError extends Error {
  override name = "PrivateNetworkError";
  readonly code = "ERR_PRIVATE_NETWORK";
  constructor(
    /** The host as the request named it. */
    readonly host: string,
    /** The address it is or resolved to. */
    readonly address: string,
    /** Why the address is refused, such as `a loopback address`. */
    readonly why: string,
  ) {
    super(
      host === address
        ? `${host} is ${why}, which this server does not connect to`
        : `${host} resolves to ${address}, ${why}, which this server does not connect to`,
    );
  }
}

/** The error behind a failed request (fetch wraps it in `cause`), when the policy refused it. */
export function privateNetworkErrorOf(error: unknown): PrivateNetworkError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current instanceof PrivateNetworkError) return current;
  }
  return undefined;
}

/** Resolves a name to all its addresses, as dns.lookup with `all: true`; tests pass their own. */
export type HostLookup = (hostname: string, options: LookupOptions) => Promise<LookupAddress[]>;

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** The `lookup` net.connect calls before it opens a socket. */
export type ConnectLookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export interface GuardedDispatcherOptions {
  /** The operator's --allow-private-network: true gives an ordinary dispatcher. */
  readonly allowPrivateNetwork: boolean;
  /** Name resolution; default the system resolver (dns.lookup). */
  readonly lookup?: HostLookup;
  /** Why an address is refused, or undefined to allow it; default privateAddressKind. */
  readonly policy?: AddressPolicy;
  /**
   * What opens a connection the policy let through, given the guarded lookup to resolve names
   * with; default undici's connector (net.connect and tls.connect). Tests pass one that records
   * the attempt instead of opening a socket.
   */
  readonly connector?: (lookup: ConnectLookup) => buildConnector.connector;
}

/**
 * An undici dispatcher (for fetch's `dispatcher` or undici's request) that checks, for every
 * connection it opens, the address it actually connects to: IP literals directly, names after
 * resolving them, refusing a name when any of its addresses is refused. The check sits where the
 * socket is made, so a redirect hop is checked like the first request and a name that resolves
 * differently on a second lookup (DNS rebinding) cannot slip past a check made earlier.
 */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  if (options.allowPrivateNetwork) return new Agent();
  const resolve: HostLookup =
    options.lookup ?? ((hostname, lookupOptions) => dnsLookup(hostname, { ...lookupOptions, all: true }));
  const policy = options.policy ?? privateAddressKind;
  const connect = (options.connector ?? ((lookup) => buildConnector({ lookup })))(guardedLookup(resolve, policy));
  return new Agent({
    connect(connectOptions, callback) {
      // net.connect skips the lookup for an IP literal, so literals are checked here.
      const host = connectOptions.hostname.startsWith("[")
        ? connectOptions.hostname.slice(1, -1)
        : connectOptions.hostname;
      const why = policy(host);
      if (why !== undefined) return callback(new PrivateNetworkError(host, host, why), null);
      return connect(connectOptions, callback);
    },
  });
}

/**
 * A `lookup` for net.connect (or node:http agent options) that refuses a name when any of its
 * addresses is refused, with the system resolver and the outbound-address policy: for clients not
 * built on undici (the AWS SDK). IP literals never reach a lookup; refuse those with privateHostKind.
 */
export function guardedSystemLookup(): ConnectLookup {
  return guardedLookup(
    (hostname, lookupOptions) => dnsLookup(hostname, { ...lookupOptions, all: true }),
    privateAddressKind,
  );
}

/** A `lookup` for net.connect that resolves with `resolve` and refuses names with a refused address. */
function guardedLookup(resolve: HostLookup, policy: AddressPolicy): ConnectLookup {
  return (hostname, options, callback) => {
    resolve(hostname, options).then(
      (addresses) => {
        for (const { address } of addresses) {
          const why = policy(address);
          if (why !== undefined) return callback(new PrivateNetworkError(hostname, address, why), "");
        }
        const first = addresses[0];
        if (first === undefined)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
        // net.connect asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}
