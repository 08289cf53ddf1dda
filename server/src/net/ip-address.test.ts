import { describe, expect, it } from "vitest";
import {
  blockContains,
  firstAddress,
  formatIpAddress,
  lastAddress,
  parseIpAddress,
  parseIpBlock,
} from "./ip-address.js";

describe("IP addresses as numbers", () => {
  it("parses every text form of IPv4 and IPv6", () => {
    expect(parseIpAddress("0.0.0.0")).toEqual({ family: 4, value: 0n });
    expect(parseIpAddress("192.0.2.1")).toEqual({ family: 4, value: 0xc0000201n });
    expect(parseIpAddress("255.255.255.255")).toEqual({ family: 4, value: 0xffffffffn });
    expect(parseIpAddress("::")).toEqual({ family: 6, value: 0n });
    expect(parseIpAddress("::1")).toEqual({ family: 6, value: 1n });
    expect(parseIpAddress("[::1]")).toEqual({ family: 6, value: 1n });
    expect(parseIpAddress("2001:db8::8:800:200c:417a")).toEqual({
      family: 6,
      value: 0x20010db8000000000008080020_0c417an,
    });
    expect(parseIpAddress("2001:DB8:0:0:8:800:200C:417A")).toEqual(parseIpAddress("2001:db8::8:800:200c:417a"));
    expect(parseIpAddress("ff02::")).toEqual({ family: 6, value: 0xff02n << 112n });
    expect(parseIpAddress("::ffff:10.0.0.1")).toEqual({ family: 6, value: 0xffff_0a000001n });
    expect(parseIpAddress("::ffff:a00:1")).toEqual(parseIpAddress("::ffff:10.0.0.1"));
    expect(parseIpAddress("64:ff9b::192.0.2.33")).toEqual({ family: 6, value: (0x64ff9bn << 96n) | 0xc0000221n });
    expect(parseIpAddress("fe80::1%eth0")).toEqual(parseIpAddress("fe80::1"));
    expect(parseIpAddress("1:2:3:4:5:6:7:8")).toEqual({ family: 6, value: 0x0001_0002_0003_0004_0005_0006_0007_0008n });
    for (const text of ["example.com", "", "1.2.3", "1.2.3.256", "::1::", "12345::", "localhost"])
      expect(parseIpAddress(text), text).toBeUndefined();
  });

  it("formats the RFC 5952 canonical text", () => {
    const canonical = [
      "0.0.0.0",
      "10.1.2.3",
      "::",
      "::1",
      "2001:db8::1",
      "2001:db8:0:1:1:1:1:1",
      "2001:0:0:1::1",
      "fe80::",
      "1:2:3:4:5:6:7:8",
      "::ffff:a00:1",
    ];
    for (const text of canonical) expect(formatIpAddress(parseIpAddress(text)!), text).toBe(text);
    expect(formatIpAddress(parseIpAddress("2001:DB8:0:0:0:0:0:1")!)).toBe("2001:db8::1");
  });

  it("reads blocks and tells their bounds and members", () => {
    const block = parseIpBlock("198.18.0.0/15");
    expect(formatIpAddress({ family: 4, value: firstAddress(block) })).toBe("198.18.0.0");
    expect(formatIpAddress({ family: 4, value: lastAddress(block) })).toBe("198.19.255.255");
    expect(blockContains(block, parseIpAddress("198.19.7.7")!)).toBe(true);
    expect(blockContains(block, parseIpAddress("198.20.0.0")!)).toBe(false);
    expect(blockContains(block, parseIpAddress("::ffff:198.18.0.1")!)).toBe(false);
    expect(blockContains(parseIpBlock("::/0"), parseIpAddress("ffff::1")!)).toBe(true);
    expect(() => parseIpBlock("10.0.0.1/8")).toThrow(/host bits/);
    expect(() => parseIpBlock("10.0.0.0/33")).toThrow(/not an address block/);
  });
});
