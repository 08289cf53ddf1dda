import { once } from "node:events";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGuardedDispatcher, isPrivateHost, privateAddresses, privateAddressKind, PrivateNetworkError, privateNetworkErrorOf } from "./private-network.js";
import type { HostLookup } from "./private-network.js";

/** Resolves the names in `table` (name → addresses) and nothing else. */
function lookupFrom(table: Record<string, string[]>): HostLookup {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

describe("the private-network policy", () => {
  it("names why an address is refused", () => {
    const refused: Record<string, string> = {
      "127.0.0.1": "a loopback address",
      "127.200.0.1": "a loopback address",
      "::1": "a loopback address",
      "0.0.0.0": "an unspecified address",
      "::": "an unspecified address",
      "10.1.2.3": "a private address",
      "172.16.0.1": "a private address",
      "172.31.255.255": "a private address",
      "192.168.1.1": "a private address",
      "fd12:3456::1": "a private address",
      "169.254.169.254": "a link-local address",
      "fe80::1": "a link-local address",
      "100.64.0.1": "a shared (carrier-grade NAT) address",
      "224.0.0.1": "a multicast address",
      "ff02::1": "a multicast address",
      "255.255.255.255": "a reserved address",
      "::127.0.0.1": "a reserved address",
      // IPv4-mapped IPv6, dotted and hexadecimal.
      "::ffff:127.0.0.1": "a loopback address",
      "::ffff:7f00:1": "a loopback address",
      "::ffff:a9fe:a9fe": "a link-local address",
      "::ffff:10.0.0.1": "a private address",
    };
    for (const [address, why] of Object.entries(refused)) {
      expect(privateAddressKind(address), address).toBe(why);
      expect(privateAddresses.check(address, address.includes(":") ? "ipv6" : "ipv4"), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "example.com"]) {
      expect(privateAddressKind(address), address).toBeUndefined();
    }
  });

  it("checks URL hosts before any lookup: literals, brackets and localhost names", () => {
    for (const url of ["http://localhost:3000/", "http://api.localhost/", "http://127.0.0.1/", "http://[::1]/", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/", "http://2130706433/", "http://[fe80::1]/"]) {
      expect(isPrivateHost(new URL(url).hostname), url).toBe(true);
    }
    for (const host of ["example.com", "[2606:4700::1111]", "93.184.216.34", "localhost.example.com"]) expect(isPrivateHost(host), host).toBe(false);
  });
});

describe("the guarded dispatcher", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end("reached"));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  async function refusal(url: string, dispatcher: ReturnType<typeof createGuardedDispatcher>): Promise<PrivateNetworkError> {
    const failure = await fetch(url, { dispatcher } as RequestInit).then(
      () => undefined,
      (error: unknown) => error,
    );
    const refused = privateNetworkErrorOf(failure);
    expect(refused, String(failure)).toBeInstanceOf(PrivateNetworkError);
    return refused!;
  }

  it("refuses IP literals at connect time", async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetwork: false });
    expect((await refusal(`http://127.0.0.1:${port}/`, dispatcher)).message).toBe("127.0.0.1 is a loopback address, which this server does not connect to");
    expect((await refusal(`http://[::ffff:127.0.0.1]:${port}/`, dispatcher)).message).toBe("::ffff:7f00:1 is a loopback address, which this server does not connect to");
  });

  it("refuses a name that resolves to a private address, and one with any private address", async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetwork: false, lookup: lookupFrom({ "app.example.test": ["127.0.0.1"], "mixed.example.test": ["93.184.216.34", "10.0.0.7"] }) });
    const refused = await refusal(`http://app.example.test:${port}/`, dispatcher);
    expect(refused).toMatchObject({ host: "app.example.test", address: "127.0.0.1", why: "a loopback address" });
    expect(refused.message).toBe("app.example.test resolves to 127.0.0.1, a loopback address, which this server does not connect to");
    expect((await refusal(`http://mixed.example.test:${port}/`, dispatcher)).address).toBe("10.0.0.7");
  });

  it("refuses through undici's request too (the callback poster's client)", async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetwork: false, lookup: lookupFrom({ "hook.example.test": ["169.254.169.254"] }) });
    const failure = await request(`http://hook.example.test:${port}/`, { method: "POST", body: "{}", dispatcher }).catch((error: unknown) => error);
    expect(privateNetworkErrorOf(failure)?.why).toBe("a link-local address");
  });

  it("connects to allowed addresses, and to anything when private networks are allowed", async () => {
    const narrow = createGuardedDispatcher({ allowPrivateNetwork: false, lookup: lookupFrom({ "allowed.example.test": ["127.0.0.1"] }), policy: () => undefined });
    expect(await (await fetch(`http://allowed.example.test:${port}/`, { dispatcher: narrow } as RequestInit)).text()).toBe("reached");
    const open = createGuardedDispatcher({ allowPrivateNetwork: true });
    expect(await (await fetch(`http://127.0.0.1:${port}/`, { dispatcher: open } as RequestInit)).text()).toBe("reached");
    expect(await (await fetch(`http://localhost:${port}/`, { dispatcher: open } as RequestInit)).text()).toBe("reached");
  });
});
