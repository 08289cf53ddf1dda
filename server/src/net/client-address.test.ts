import { describe, expect, it } from "vitest";
import { clientAddressOf, parseTrustedProxies } from "./client-address.js";

const trusted = parseTrustedProxies("10.0.0.0/8, 192.0.2.7, 2001:db8::/32");

describe("client address", () => {
  it("is the peer when no proxy is trusted, whatever the client sends", () => {
    expect(clientAddressOf("198.51.100.4", "203.0.113.9", undefined)).toBe("198.51.100.4");
    expect(clientAddressOf(undefined, undefined, undefined)).toBe("unknown");
  });

  it("is the peer when the peer is not a trusted proxy", () => {
    expect(clientAddressOf("198.51.100.4", "203.0.113.9", trusted)).toBe("198.51.100.4");
  });

  it("is the last address a trusted proxy received from, skipping trusted hops and anything the client wrote", () => {
    expect(clientAddressOf("10.1.2.3", "203.0.113.9", trusted)).toBe("203.0.113.9");
    // The client sent "1.1.1.1"; the edge proxy appended the address it saw; an inner proxy appended the edge's.
    expect(clientAddressOf("10.1.2.3", "1.1.1.1, 203.0.113.9, 192.0.2.7", trusted)).toBe("203.0.113.9");
    expect(clientAddressOf("::ffff:10.1.2.3", ["1.1.1.1", "2001:db8::5, 198.51.100.20"], trusted)).toBe(
      "198.51.100.20",
    );
    expect(clientAddressOf("2001:db8::1", "2001:db8::9, 203.0.113.9", trusted)).toBe("203.0.113.9");
  });

  it("is the leftmost hop when every hop is a trusted proxy, and the peer without the header", () => {
    expect(clientAddressOf("10.1.2.3", "10.9.9.9, 192.0.2.7", trusted)).toBe("10.9.9.9");
    expect(clientAddressOf("10.1.2.3", undefined, trusted)).toBe("10.1.2.3");
    expect(clientAddressOf("10.1.2.3", " , ", trusted)).toBe("10.1.2.3");
  });

  it("parses addresses and ranges, refusing anything else by name", () => {
    expect(parseTrustedProxies(" ")).toBeUndefined();
    expect(parseTrustedProxies("127.0.0.1,::1")?.check("127.0.0.1")).toBe(true);
    for (const bad of ["localhost", "10.0.0.0/33", "::/129", "10.0.0.0/8/1", "10.0.0.0/x", "300.1.1.1"]) {
      expect(() => parseTrustedProxies(`127.0.0.1,${bad}`)).toThrow(`"${bad}" is not an IP address or CIDR range`);
    }
  });
});
