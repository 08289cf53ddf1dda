import { BlockList, isIP } from "node:net";

/**
 * Parses `--trusted-proxies`: addresses and CIDR ranges (`10.0.0.0/8`, `2001:db8::/32`,
 * `192.0.2.7`), comma-separated. Throws naming the first entry that is neither.
 */
export function parseTrustedProxies(list: string): BlockList | undefined {
  const entries = list
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return undefined;
  const trusted = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (
      family === 0 ||
      extra !== undefined ||
      !/^\d*$/.test(prefix ?? "") ||
      !Number.isInteger(bits) ||
      bits < 0 ||
      bits > (family === 6 ? 128 : 32)
    ) {
      throw new Error(`"${entry}" is not an IP address or CIDR range`);
    }
    trusted.addSubnet(address, bits, family === 6 ? "ipv6" : "ipv4");
  }
  return trusted;
}

/**
 * The client's address as far as the server can tell: the connection's peer, unless that peer is
 * a trusted proxy. Then `X-Forwarded-For` is read from the right (each proxy appends the address it
 * received the request from), trusted proxies are skipped, and the first other address is the
 * client's. Whatever a client wrote into the header itself sits left of that and is never reached,
 * so a client cannot choose the address its requests are counted against.
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: BlockList | undefined,
): string {
  let client = peer ?? "unknown";
  if (!trusted || !isTrusted(trusted, client) || forwardedFor === undefined) return client;
  const hops = (typeof forwardedFor === "string" ? [forwardedFor] : forwardedFor).join(",").split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!.trim();
    if (!hop) continue;
    client = hop;
    if (!isTrusted(trusted, hop)) break;
  }
  return client;
}

function isTrusted(trusted: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && trusted.check(address, family === 6 ? "ipv6" : "ipv4");
}
