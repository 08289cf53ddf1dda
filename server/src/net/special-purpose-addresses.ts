import { blockContains, parseIpBlock, type IpAddress, type IpBlock } from "./ip-address.js";

/**
 * One entry of the IANA Special-Purpose Address Registries, with its "Globally Reachable" column:
 * `true`, `false`, or `"n/a"` for deprecated blocks that the registry no longer rates.
 */
export interface SpecialPurposeEntry {
  readonly block: string;
  readonly name: string;
  readonly reference: string;
  readonly globallyReachable: boolean | "n/a";
  /** Why an address in the block is refused, as an error message says it (`a loopback address`). */
  readonly why: string;
}

/**
 * The IANA IPv4 Special-Purpose Address Registry
 * (https://www.iana.org/assignments/iana-ipv4-special-registry, RFC 6890 as updated by RFC 8190),
 * plus multicast (RFC 5771), which that registry leaves to its own.
 */
export const IPV4_SPECIAL_PURPOSE: readonly SpecialPurposeEntry[] = [
  {
    block: "0.0.0.0/8",
    name: '"This network"',
    reference: "RFC 791 section 3.2",
    globallyReachable: false,
    why: "an unspecified address",
  },
  {
    block: "0.0.0.0/32",
    name: '"This host on this network"',
    reference: "RFC 1122 section 3.2.1.3",
    globallyReachable: false,
    why: "an unspecified address",
  },
  {
    block: "10.0.0.0/8",
    name: "Private-Use",
    reference: "RFC 1918",
    globallyReachable: false,
    why: "a private address",
  },
  {
    block: "100.64.0.0/10",
    name: "Shared Address Space",
    reference: "RFC 6598",
    globallyReachable: false,
    why: "a shared (carrier-grade NAT) address",
  },
  {
    block: "127.0.0.0/8",
    name: "Loopback",
    reference: "RFC 1122 section 3.2.1.3",
    globallyReachable: false,
    why: "a loopback address",
  },
  {
    block: "169.254.0.0/16",
    name: "Link Local",
    reference: "RFC 3927",
    globallyReachable: false,
    why: "a link-local address",
  },
  {
    block: "172.16.0.0/12",
    name: "Private-Use",
    reference: "RFC 1918",
    globallyReachable: false,
    why: "a private address",
  },
  {
    block: "192.0.0.0/24",
    name: "IETF Protocol Assignments",
    reference: "RFC 6890 section 2.1",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "192.0.0.0/29",
    name: "IPv4 Service Continuity Prefix",
    reference: "RFC 7335",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "192.0.0.8/32",
    name: "IPv4 dummy address",
    reference: "RFC 7600",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "192.0.0.9/32",
    name: "Port Control Protocol Anycast",
    reference: "RFC 7723",
    globallyReachable: true,
    why: "",
  },
  {
    block: "192.0.0.10/32",
    name: "Traversal Using Relays around NAT Anycast",
    reference: "RFC 8155",
    globallyReachable: true,
    why: "",
  },
  {
    block: "192.0.0.170/32",
    name: "NAT64/DNS64 Discovery",
    reference: "RFC 8880, RFC 7050 section 2.2",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "192.0.0.171/32",
    name: "NAT64/DNS64 Discovery",
    reference: "RFC 8880, RFC 7050 section 2.2",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "192.0.2.0/24",
    name: "Documentation (TEST-NET-1)",
    reference: "RFC 5737",
    globallyReachable: false,
    why: "a documentation address",
  },
  { block: "192.31.196.0/24", name: "AS112-v4", reference: "RFC 7535", globallyReachable: true, why: "" },
  { block: "192.52.193.0/24", name: "AMT", reference: "RFC 7450", globallyReachable: true, why: "" },
  {
    block: "192.88.99.0/24",
    name: "Deprecated (6to4 Relay Anycast)",
    reference: "RFC 7526",
    globallyReachable: "n/a",
    why: "a deprecated 6to4 relay address",
  },
  {
    block: "192.168.0.0/16",
    name: "Private-Use",
    reference: "RFC 1918",
    globallyReachable: false,
    why: "a private address",
  },
  {
    block: "192.175.48.0/24",
    name: "Direct Delegation AS112 Service",
    reference: "RFC 7534",
    globallyReachable: true,
    why: "",
  },
  {
    block: "198.18.0.0/15",
    name: "Benchmarking",
    reference: "RFC 2544",
    globallyReachable: false,
    why: "a benchmarking address",
  },
  {
    block: "198.51.100.0/24",
    name: "Documentation (TEST-NET-2)",
    reference: "RFC 5737",
    globallyReachable: false,
    why: "a documentation address",
  },
  {
    block: "203.0.113.0/24",
    name: "Documentation (TEST-NET-3)",
    reference: "RFC 5737",
    globallyReachable: false,
    why: "a documentation address",
  },
  {
    block: "224.0.0.0/4",
    name: "Multicast",
    reference: "RFC 5771",
    globallyReachable: false,
    why: "a multicast address",
  },
  {
    block: "240.0.0.0/4",
    name: "Reserved",
    reference: "RFC 1112 section 4",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "255.255.255.255/32",
    name: "Limited Broadcast",
    reference: "RFC 8190, RFC 919 section 7",
    globallyReachable: false,
    why: "a broadcast address",
  },
];

/**
 * The IANA IPv6 Special-Purpose Address Registry
 * (https://www.iana.org/assignments/iana-ipv6-special-registry, RFC 6890 as updated by RFC 8190),
 * over the IANA IPv6 Address Space registry's split: only 2000::/3 is global unicast, and the rest
 * outside the registry's own entries, multicast and the local blocks is reserved by the IETF
 * (RFC 4291 section 2.4), so no host there can be reached.
 */
export const IPV6_SPECIAL_PURPOSE: readonly SpecialPurposeEntry[] = [
  {
    block: "::/0",
    name: "Reserved by IETF",
    reference: "RFC 4291 section 2.4",
    globallyReachable: false,
    why: "a reserved address",
  },
  { block: "2000::/3", name: "Global Unicast", reference: "RFC 4291 section 2.4", globallyReachable: true, why: "" },
  {
    block: "::1/128",
    name: "Loopback Address",
    reference: "RFC 4291",
    globallyReachable: false,
    why: "a loopback address",
  },
  {
    block: "::/128",
    name: "Unspecified Address",
    reference: "RFC 4291",
    globallyReachable: false,
    why: "an unspecified address",
  },
  {
    block: "::ffff:0:0/96",
    name: "IPv4-mapped Address",
    reference: "RFC 4291",
    globallyReachable: false,
    why: "an IPv4-mapped address",
  },
  { block: "64:ff9b::/96", name: "IPv4-IPv6 Translat.", reference: "RFC 6052", globallyReachable: true, why: "" },
  {
    block: "64:ff9b:1::/48",
    name: "IPv4-IPv6 Translat.",
    reference: "RFC 8215",
    globallyReachable: false,
    why: "a local-use translation address",
  },
  {
    block: "100::/64",
    name: "Discard-Only Address Block",
    reference: "RFC 6666",
    globallyReachable: false,
    why: "a discard-only address",
  },
  {
    block: "2001::/23",
    name: "IETF Protocol Assignments",
    reference: "RFC 2928",
    globallyReachable: false,
    why: "a reserved address",
  },
  {
    block: "2001::/32",
    name: "TEREDO",
    reference: "RFC 4380, RFC 8190",
    globallyReachable: "n/a",
    why: "a teredo tunnel address",
  },
  {
    block: "2001:1::1/128",
    name: "Port Control Protocol Anycast",
    reference: "RFC 7723",
    globallyReachable: true,
    why: "",
  },
  {
    block: "2001:1::2/128",
    name: "Traversal Using Relays around NAT Anycast",
    reference: "RFC 8155",
    globallyReachable: true,
    why: "",
  },
  {
    block: "2001:1::3/128",
    name: "DNS-SD Service Registration Protocol Anycast",
    reference: "RFC 9665",
    globallyReachable: true,
    why: "",
  },
  {
    block: "2001:2::/48",
    name: "Benchmarking",
    reference: "RFC 5180, RFC Errata 1752",
    globallyReachable: false,
    why: "a benchmarking address",
  },
  { block: "2001:3::/32", name: "AMT", reference: "RFC 7450", globallyReachable: true, why: "" },
  { block: "2001:4:112::/48", name: "AS112-v6", reference: "RFC 7535", globallyReachable: true, why: "" },
  {
    block: "2001:10::/28",
    name: "Deprecated (previously ORCHID)",
    reference: "RFC 4843",
    globallyReachable: "n/a",
    why: "a deprecated orchid address",
  },
  { block: "2001:20::/28", name: "ORCHIDv2", reference: "RFC 7343", globallyReachable: true, why: "" },
  {
    block: "2001:30::/28",
    name: "Drone Remote ID Protocol Entity Tags (DETs) Prefix",
    reference: "RFC 9374",
    globallyReachable: true,
    why: "",
  },
  {
    block: "2001:db8::/32",
    name: "Documentation",
    reference: "RFC 3849",
    globallyReachable: false,
    why: "a documentation address",
  },
  { block: "2002::/16", name: "6to4", reference: "RFC 3056", globallyReachable: "n/a", why: "a 6to4 tunnel address" },
  {
    block: "2620:4f:8000::/48",
    name: "Direct Delegation AS112 Service",
    reference: "RFC 7534",
    globallyReachable: true,
    why: "",
  },
  {
    block: "3fff::/20",
    name: "Documentation",
    reference: "RFC 9637",
    globallyReachable: false,
    why: "a documentation address",
  },
  {
    block: "5f00::/16",
    name: "Segment Routing (SRv6) SIDs",
    reference: "RFC 9602",
    globallyReachable: false,
    why: "a segment routing address",
  },
  {
    block: "fc00::/7",
    name: "Unique-Local",
    reference: "RFC 4193, RFC 8190",
    globallyReachable: false,
    why: "a private address",
  },
  {
    block: "fe80::/10",
    name: "Link-Local Unicast",
    reference: "RFC 4291",
    globallyReachable: false,
    why: "a link-local address",
  },
  {
    block: "ff00::/8",
    name: "Multicast",
    reference: "RFC 4291 section 2.7",
    globallyReachable: false,
    why: "a multicast address",
  },
];

interface CompiledEntry {
  readonly block: IpBlock;
  readonly entry: SpecialPurposeEntry;
}

/** Most specific block first, so that the first match is the entry that decides (a /32 inside a /24). */
const COMPILED: readonly CompiledEntry[] = [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE]
  .map((entry) => ({ block: parseIpBlock(entry.block), entry }))
  .sort((a, b) => b.block.prefix - a.block.prefix);

/**
 * The registry entry that decides for an address: the most specific block holding it, as the
 * registries' footnotes say of a block inside another ("unless allowed by a more specific
 * allocation"). Undefined for an IPv4 address outside every entry, an ordinary public one.
 */
export function specialPurposeEntry(address: IpAddress): SpecialPurposeEntry | undefined {
  return COMPILED.find(({ block }) => blockContains(block, address))?.entry;
}
