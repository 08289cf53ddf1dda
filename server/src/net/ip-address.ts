import { isIP } from "node:net";

/** An IP address as a number: 32 bits for IPv4, 128 bits for IPv6. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly value: bigint;
}

/** Width of an address of each family, in bits. */
export const ADDRESS_BITS = { 4: 32, 6: 128 } as const;

/**
 * Parses an IP address in any text form net.isIP accepts: dotted IPv4, IPv6 with `::` and a
 * dotted IPv4 tail (`::ffff:10.0.0.1`), with or without brackets and a zone (`fe80::1%eth0`,
 * whose zone does not change the address). Anything else, names included, is undefined.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const family = isIP(bare);
  if (family === 4) return { family: 4, value: ipv4Value(bare) };
  if (family === 6) return { family: 6, value: ipv6Value(bare.replace(/%.*$/, "")) };
  return undefined;
}

function ipv4Value(text: string): bigint {
  return text.split(".").reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
}

/** isIP has checked the text: at most one `::`, groups of 1 to 4 hex digits, a dotted tail last. */
function ipv6Value(text: string): bigint {
  const groups = (part: string): number[] => {
    if (part === "") return [];
    return part.split(":").flatMap((group) => {
      if (!group.includes(".")) return [parseInt(group, 16)];
      const v4 = Number(ipv4Value(group));
      return [v4 >>> 16, v4 & 0xffff];
    });
  };
  const [head = "", tail] = text.split("::") as [string, string | undefined];
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/** The canonical text of an address: dotted IPv4, or RFC 5952 IPv6 (lower case, longest zero run as `::`). */
export function formatIpAddress({ family, value }: IpAddress): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join(".");
  const groups = [112n, 96n, 80n, 64n, 48n, 32n, 16n, 0n].map((shift) => Number((value >> shift) & 0xffffn));
  let best = { start: -1, length: 1 }; // a single zero group is not shortened (RFC 5952 4.2.2)
  for (let start = 0; start < 8; start++) {
    let length = 0;
    while (start + length < 8 && groups[start + length] === 0) length++;
    if (length > best.length) best = { start, length };
  }
  const hex = groups.map((group) => group.toString(16));
  if (best.start < 0) return hex.join(":");
  return `${hex.slice(0, best.start).join(":")}::${hex.slice(best.start + best.length).join(":")}`;
}

/** An address block in CIDR form, `network/prefix`. */
export interface IpBlock {
  readonly family: 4 | 6;
  readonly network: bigint;
  readonly prefix: number;
}

export function parseIpBlock(cidr: string): IpBlock {
  const [text, prefixText] = cidr.split("/") as [string, string | undefined];
  const address = parseIpAddress(text);
  const prefix = Number(prefixText);
  if (address === undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > ADDRESS_BITS[address.family])
    throw new Error(`${cidr} is not an address block`);
  if (address.value !== firstAddress({ ...address, network: address.value, prefix }))
    throw new Error(`${cidr} has host bits set`);
  return { family: address.family, network: address.value, prefix };
}

export function blockContains(block: IpBlock, address: IpAddress): boolean {
  if (block.family !== address.family) return false;
  const hostBits = BigInt(ADDRESS_BITS[block.family] - block.prefix);
  return address.value >> hostBits === block.network >> hostBits;
}

export function firstAddress(block: IpBlock): bigint {
  const hostBits = BigInt(ADDRESS_BITS[block.family] - block.prefix);
  return (block.network >> hostBits) << hostBits;
}

export function lastAddress(block: IpBlock): bigint {
  const hostBits = BigInt(ADDRESS_BITS[block.family] - block.prefix);
  return firstAddress(block) | ((1n << hostBits) - 1n);
}
