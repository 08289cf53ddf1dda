import { networkInterfaces } from "node:os";
import { blockContains, parseIpAddress, parseIpBlock, type IpAddress } from "./ip-address.js";
import { specialPurposeEntry } from "./special-purpose-addresses.js";

/**
 * The server's policy on outbound requests made for a user (http.request, thread callbacks): they
 * reach the public internet only. An address is refused when the entry of the IANA Special-Purpose
 * Address Registries that holds it is not globally reachable (special-purpose-addresses.ts: loopback,
 * private, link-local, shared, documentation, benchmarking, reserved, multicast...), and when it is
 * an address of this machine's own network interfaces, which a public address can be too.
 * `--allow-private-network` lifts the policy for development.
 */

/**
 * NAT64's well-known prefix (RFC 6052) is globally reachable, but a translator forwards a connection
 * to the IPv4 address in its low 32 bits, so that address decides. An IPv4-mapped address, refused
 * whole by the registry, is named by its IPv4 address's reason when that has one
 * (`::ffff:127.0.0.1` is a loopback address). 6to4 and Teredo embed IPv4 addresses too, and are
 * refused whole.
 */
const NAT64_WELL_KNOWN_PREFIX = parseIpBlock("64:ff9b::/96");
const IPV4_MAPPED = parseIpBlock("::ffff:0:0/96");

/** Why an address is refused (`a loopback address`), or undefined when it may be reached or is no IP. */
export type AddressPolicy = (address: string) => string | undefined;

/** The addresses of this machine's network interfaces, as os.networkInterfaces() lists them. */
export type OwnAddresses = () => readonly string[];

/**
 * The interfaces are read on every check, not once at start-up: an address can be added to a
 * running machine (DHCP, a cloud's secondary address), and reading them costs microseconds.
 */
const interfaceAddresses: OwnAddresses = () =>
  Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((info) => info.address));

/** The policy over the registry and the addresses `ownAddresses` lists; tests pass their own list. */
export function createAddressPolicy(ownAddresses: OwnAddresses = interfaceAddresses): AddressPolicy {
  return (address) => {
    const parsed = parseIpAddress(address);
    if (parsed === undefined) return undefined;
    const embedded = embeddedIpv4(parsed);
    // An address embedding IPv4 is refused for its IPv4 address's reason, the one a user can act on.
    const refusal = (embedded && registryRefusal(embedded)) ?? registryRefusal(parsed);
    if (refusal !== undefined) return refusal;
    const candidates = embedded ? [parsed, embedded] : [parsed];
    for (const text of ownAddresses()) {
      const own = parseIpAddress(text);
      if (own && candidates.some((candidate) => candidate.family === own.family && candidate.value === own.value))
        return "an address of this machine";
    }
    return undefined;
  };
}

/** The server's policy: the registry and this machine's interface addresses. */
export const privateAddressKind: AddressPolicy = createAddressPolicy();

function embeddedIpv4(address: IpAddress): IpAddress | undefined {
  if (!blockContains(NAT64_WELL_KNOWN_PREFIX, address) && !blockContains(IPV4_MAPPED, address)) return undefined;
  return { family: 4, value: address.value & 0xffff_ffffn };
}

function registryRefusal(address: IpAddress): string | undefined {
  const entry = specialPurposeEntry(address);
  return entry === undefined || entry.globallyReachable === true ? undefined : entry.why;
}
