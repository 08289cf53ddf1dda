import { describe, expect, it } from "vitest";
import { createAddressPolicy } from "./address-policy.js";
import { firstAddress, formatIpAddress, lastAddress, parseIpBlock, ADDRESS_BITS } from "./ip-address.js";
import { IPV4_SPECIAL_PURPOSE, IPV6_SPECIAL_PURPOSE } from "./special-purpose-addresses.js";

/** R: the policy refuses the address; A: it allows it; -: there is no such neighbour. */
type Decision = "R" | "A" | "-";

/**
 * Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries (and multicast, and the
 * IPv6 space outside global unicast), written out here by hand from the registries rather than
 * derived from the table under test: the decision for the block's first and last address, and for
 * the addresses just outside it (one below the first, one above the last), which a nearby entry
 * may decide.
 */
const EXPECTED: readonly (readonly [
  block: string,
  first: Decision,
  last: Decision,
  below: Decision,
  above: Decision,
])[] = [
  ["0.0.0.0/8", "R", "R", "-", "A"],
  ["0.0.0.0/32", "R", "R", "-", "R"],
  ["10.0.0.0/8", "R", "R", "A", "A"],
  ["100.64.0.0/10", "R", "R", "A", "A"],
  ["127.0.0.0/8", "R", "R", "A", "A"],
  ["169.254.0.0/16", "R", "R", "A", "A"],
  ["172.16.0.0/12", "R", "R", "A", "A"],
  ["192.0.0.0/24", "R", "R", "A", "A"],
  ["192.0.0.0/29", "R", "R", "A", "R"],
  ["192.0.0.8/32", "R", "R", "R", "A"],
  ["192.0.0.9/32", "A", "A", "R", "A"],
  ["192.0.0.10/32", "A", "A", "A", "R"],
  ["192.0.0.170/32", "R", "R", "R", "R"],
  ["192.0.0.171/32", "R", "R", "R", "R"],
  ["192.0.2.0/24", "R", "R", "A", "A"],
  ["192.31.196.0/24", "A", "A", "A", "A"],
  ["192.52.193.0/24", "A", "A", "A", "A"],
  ["192.88.99.0/24", "R", "R", "A", "A"],
  ["192.168.0.0/16", "R", "R", "A", "A"],
  ["192.175.48.0/24", "A", "A", "A", "A"],
  ["198.18.0.0/15", "R", "R", "A", "A"],
  ["198.51.100.0/24", "R", "R", "A", "A"],
  ["203.0.113.0/24", "R", "R", "A", "A"],
  ["224.0.0.0/4", "R", "R", "A", "R"],
  ["240.0.0.0/4", "R", "R", "R", "-"],
  ["255.255.255.255/32", "R", "R", "R", "-"],

  ["::/0", "R", "R", "-", "-"],
  ["2000::/3", "A", "A", "R", "R"],
  ["::1/128", "R", "R", "R", "R"],
  ["::/128", "R", "R", "-", "R"],
  ["::ffff:0:0/96", "R", "R", "R", "R"],
  ["64:ff9b::/96", "R", "R", "R", "R"], // 64:ff9b::0.0.0.0 and 64:ff9b::255.255.255.255 embed refused IPv4
  ["64:ff9b:1::/48", "R", "R", "R", "R"],
  ["100::/64", "R", "R", "R", "R"],
  ["2001::/23", "R", "R", "A", "A"],
  ["2001::/32", "R", "R", "A", "R"],
  ["2001:1::1/128", "A", "A", "R", "A"],
  ["2001:1::2/128", "A", "A", "A", "A"],
  ["2001:1::3/128", "A", "A", "A", "R"],
  ["2001:2::/48", "R", "R", "R", "R"],
  ["2001:3::/32", "A", "A", "R", "R"],
  ["2001:4:112::/48", "A", "A", "R", "R"],
  ["2001:10::/28", "R", "R", "R", "A"],
  ["2001:20::/28", "A", "A", "R", "A"],
  ["2001:30::/28", "A", "A", "A", "R"],
  ["2001:db8::/32", "R", "R", "A", "A"],
  ["2002::/16", "R", "R", "A", "A"],
  ["2620:4f:8000::/48", "A", "A", "A", "A"],
  ["3fff::/20", "R", "R", "A", "A"],
  ["5f00::/16", "R", "R", "R", "R"],
  ["fc00::/7", "R", "R", "R", "R"],
  ["fe80::/10", "R", "R", "R", "R"],
  ["ff00::/8", "R", "R", "R", "-"],
];

const policy = createAddressPolicy(() => []);
const decide = (address: string): Decision => (policy(address) === undefined ? "A" : "R");

describe("the special-purpose address registries", () => {
  it("hold exactly the entries tested here", () => {
    expect([...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE].map((entry) => entry.block)).toEqual(
      EXPECTED.map(([block]) => block),
    );
  });

  it("refuse exactly the entries that are not globally reachable", () => {
    for (const entry of [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE]) {
      expect(entry.why === "", entry.block).toBe(entry.globallyReachable === true);
    }
  });

  it.each(EXPECTED)("decide %s at its bounds and just outside", (cidr, first, last, below, above) => {
    const block = parseIpBlock(cidr);
    const max = (1n << BigInt(ADDRESS_BITS[block.family])) - 1n;
    const text = (value: bigint) => formatIpAddress({ family: block.family, value });
    const low = firstAddress(block);
    const high = lastAddress(block);
    const decisions = {
      first: decide(text(low)),
      last: decide(text(high)),
      below: low === 0n ? "-" : decide(text(low - 1n)),
      above: high === max ? "-" : decide(text(high + 1n)),
    };
    expect(decisions, `${text(low)} .. ${text(high)}`).toEqual({ first, last, below, above });
  });
});

describe("the address policy", () => {
  it("names why an address is refused", () => {
    const refused: Record<string, string> = {
      "127.0.0.1": "a loopback address",
      "127.200.0.1": "a loopback address",
      "::1": "a loopback address",
      "0.0.0.0": "an unspecified address",
      "0.1.2.3": "an unspecified address",
      "::": "an unspecified address",
      "10.1.2.3": "a private address",
      "172.31.255.255": "a private address",
      "192.168.1.1": "a private address",
      "fd12:3456::1": "a private address",
      "169.254.169.254": "a link-local address",
      "fe80::1": "a link-local address",
      "fe80::1%eth0": "a link-local address",
      "100.64.0.1": "a shared (carrier-grade NAT) address",
      "198.18.0.1": "a benchmarking address",
      "198.19.255.254": "a benchmarking address",
      "2001:2::1": "a benchmarking address",
      "192.0.2.10": "a documentation address",
      "198.51.100.7": "a documentation address",
      "203.0.113.200": "a documentation address",
      "2001:db8::1": "a documentation address",
      "3fff::1": "a documentation address",
      "224.0.0.1": "a multicast address",
      "ff02::1": "a multicast address",
      "255.255.255.255": "a broadcast address",
      "240.0.0.1": "a reserved address",
      "192.0.0.8": "a reserved address",
      "::127.0.0.1": "a reserved address",
      "fec0::1": "a reserved address",
      "100::1": "a discard-only address",
      "5f00::1": "a segment routing address",
      // IPv4-mapped addresses are refused whole, by their IPv4 address's reason when it has one.
      "::ffff:127.0.0.1": "a loopback address",
      "::ffff:7f00:1": "a loopback address",
      "::ffff:a9fe:a9fe": "a link-local address",
      "::ffff:10.0.0.1": "a private address",
      "::ffff:8.8.8.8": "an IPv4-mapped address",
      // NAT64's well-known prefix is decided by the IPv4 address it carries.
      "64:ff9b::10.0.0.1": "a private address",
      "64:ff9b::7f00:1": "a loopback address",
      "64:ff9b::a9fe:a9fe": "a link-local address",
      "64:ff9b:1::8.8.8.8": "a local-use translation address",
      // 6to4 and Teredo are refused whole, whatever they embed.
      "2002:808:808::1": "a 6to4 tunnel address",
      "2002:7f00:1::1": "a 6to4 tunnel address",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2": "a teredo tunnel address",
    };
    for (const [address, why] of Object.entries(refused)) expect(policy(address), address).toBe(why);
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "172.32.0.1",
      "100.128.0.1",
      "192.0.0.9",
      "2606:4700::1111",
      "64:ff9b::8.8.8.8",
      "2001:3::1",
      "example.com",
      "",
    ]) {
      expect(policy(address), address).toBeUndefined();
    }
  });

  it("refuses this machine's own addresses, and a NAT64 address carrying one, even when public", () => {
    const own = createAddressPolicy(() => ["127.0.0.1", "93.184.216.34", "2606:4700::6810:1", "fe80::1"]);
    expect(own("93.184.216.34")).toBe("an address of this machine");
    expect(own("2606:4700::6810:1")).toBe("an address of this machine");
    expect(own("2606:4700:0:0:0:0:6810:0001")).toBe("an address of this machine");
    expect(own("64:ff9b::93.184.216.34")).toBe("an address of this machine");
    expect(own("93.184.216.35")).toBeUndefined();
    expect(own("2606:4700::6810:2")).toBeUndefined();
    expect(policy("93.184.216.34")).toBeUndefined();
  });

  it("reads the interfaces on every check", () => {
    let interfaces: string[] = [];
    const changing = createAddressPolicy(() => interfaces);
    expect(changing("93.184.216.34")).toBeUndefined();
    interfaces = ["93.184.216.34"];
    expect(changing("93.184.216.34")).toBe("an address of this machine");
  });
});
