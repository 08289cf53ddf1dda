import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupAddress, LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, buildConnector } from "undici";
import type { Dispatcher } from "undici";

/**
 * The server's policy on outbound requests made for a user (http.request, thread callbacks):
 * they must not reach the server's own machine or network. Addresses in these ranges are refused
 * unless the operator allows private networks (--allow-private-network, for development):
 * loopback, RFC 1918 and unique-local (ULA), link-local (with the 169.254.169.254 cloud metadata
 * service), shared CGNAT space, unspecified, multicast and reserved addresses. net.BlockList
 * applies the IPv4 ranges to IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`, `::ffff:7f00:1`) too.
 */
const RANGES: ReadonlyArray<readonly [why: string, subnets: readonly string[]]> = [
  ["a loopback address", ["127.0.0.0/8", "::1/128"]],
  ["an unspecified address", ["0.0.0.0/8", "::/128"]],
  ["a private address", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]],
  ["a link-local address", ["169.254.0.0/16", "fe80::/10"]],
  ["a shared (carrier-grade NAT) address", ["100.64.0.0/10"]],
  ["a multicast address", ["224.0.0.0/4", "ff00::/8"]],
  // 240/4 holds the broadcast address; ::/96 is the deprecated IPv4-compatible form (`::127.0.0.1`).
  ["a reserved address", ["240.0.0.0/4", "192.0.0.0/24", "::/96", "fec0::/10"]],
];

const LISTS: ReadonlyArray<readonly [string, BlockList]> = RANGES.map(([why, subnets]) => [why, blockListOf(subnets)] as const);

/** Every refused range in one list, for callers that only need a yes or no. */
export const privateAddresses: BlockList = blockListOf(RANGES.flatMap(([, subnets]) => subnets));

function blockListOf(subnets: readonly string[]): BlockList {
  const list = new BlockList();
  for (const subnet of subnets) {
    const [network, prefix] = subnet.split("/") as [string, string];
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? "ipv6" : "ipv4");
  }
  return list;
}

/** Why an IP address is refused (`a loopback address`), or undefined when it may be reached or is no IP. */
export function privateAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const type = family === 6 ? "ipv6" : "ipv4";
  return LISTS.find(([, list]) => list.check(address, type))?.[0];
}

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
    super(host === address ? `${host} is ${why}, which this server does not connect to` : `${host} resolves to ${address}, ${why}, which this server does not connect to`);
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

export interface GuardedDispatcherOptions {
  /** The operator's --allow-private-network: true gives an ordinary dispatcher. */
  readonly allowPrivateNetwork: boolean;
  /** Name resolution; default the system resolver (dns.lookup). */
  readonly lookup?: HostLookup;
  /** Why an address is refused, or undefined to allow it; default privateAddressKind. */
  readonly policy?: (address: string) => string | undefined;
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
  const resolve: HostLookup = options.lookup ?? ((hostname, lookupOptions) => dnsLookup(hostname, { ...lookupOptions, all: true }));
  const policy = options.policy ?? privateAddressKind;
  const connect = buildConnector({ lookup: guardedLookup(resolve, policy) });
  return new Agent({
    connect(connectOptions, callback) {
      // net.connect skips the lookup for an IP literal, so literals are checked here.
      const host = connectOptions.hostname.startsWith("[") ? connectOptions.hostname.slice(1, -1) : connectOptions.hostname;
      const why = policy(host);
      if (why !== undefined) return callback(new PrivateNetworkError(host, host, why), null);
      return connect(connectOptions, callback);
    },
  });
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that resolves with `resolve` and refuses names with a refused address. */
function guardedLookup(resolve: HostLookup, policy: (address: string) => string | undefined): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    resolve(hostname, options).then(
      (addresses) => {
        for (const { address } of addresses) {
          const why = policy(address);
          if (why !== undefined) return callback(new PrivateNetworkError(hostname, address, why), "");
        }
        const first = addresses[0];
        if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
        // net.connect asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}
