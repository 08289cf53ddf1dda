import { once } from "node:events";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { isIP, type AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { buildConnector, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAddressPolicy } from "./address-policy.js";
import {
  createGuardedDispatcher,
  guardedSystemLookup,
  isPrivateHost,
  privateAddressKind,
  PrivateNetworkError,
  privateNetworkErrorOf,
} from "./private-network.js";
import type { GuardedDispatcherOptions, HostLookup } from "./private-network.js";

/** Resolves the names in `table` (name → addresses) and nothing else. */
function lookupFrom(table: Record<string, string[]>): HostLookup {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

describe("URL hosts", () => {
  it("are checked before any lookup: literals, brackets and localhost names", () => {
    for (const url of [
      "http://localhost:3000/",
      "http://api.localhost/",
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0x7f.1/",
      "http://2130706433/",
      "http://[fe80::1]/",
      "http://198.18.0.1/",
      "http://[2001:db8::1]/",
      "http://[64:ff9b::a00:1]/",
    ]) {
      expect(isPrivateHost(new URL(url).hostname), url).toBe(true);
    }
    for (const host of ["example.com", "[2606:4700::1111]", "93.184.216.34", "localhost.example.com"])
      expect(isPrivateHost(host), host).toBe(false);
  });
});

/** This machine's interface addresses other than loopback: the policy must refuse them too. */
const ownAddresses = Object.values(networkInterfaces())
  .flatMap((list) => list ?? [])
  .filter((info) => !info.internal)
  .map((info) => info.address);

/**
 * A connector that opens sockets to loopback addresses only. Any other address the guard lets
 * through is recorded in `attempts` and failed without a socket, so that a test of a refusal sends
 * nothing beyond this machine's loopback even when the guard is broken.
 */
function loopbackOnly(attempts: string[]): NonNullable<GuardedDispatcherOptions["connector"]> {
  return (lookup) => {
    const connect = buildConnector({ lookup });
    return (options, callback) => {
      const host = options.hostname.startsWith("[") ? options.hostname.slice(1, -1) : options.hostname;
      const proceed = (addresses: string[]) => {
        if (addresses.length > 0 && addresses.every((address) => /^127\./.test(address) || address === "::1"))
          return connect(options, callback);
        attempts.push(...addresses);
        return callback(new Error(`the test connector opens no socket to ${addresses.join(", ")}`), null);
      };
      if (isIP(host) !== 0) return proceed([host]);
      lookup(host, { all: true }, (error, addresses) => {
        if (error) return callback(error, null);
        proceed(typeof addresses === "string" ? [addresses] : addresses.map((entry) => entry.address));
      });
    };
  };
}

describe("the guarded dispatcher", () => {
  let server: Server;
  let port: number;
  const served: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      served.push(req.url ?? "");
      const redirect = new URL(req.url ?? "/", "http://127.0.0.1").searchParams.get("to");
      if (redirect !== null) res.writeHead(302, { location: redirect }).end();
      else res.end("reached");
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });

  async function refusal(
    url: string,
    dispatcher: ReturnType<typeof createGuardedDispatcher>,
  ): Promise<PrivateNetworkError> {
    const failure = await fetch(url, { dispatcher } as RequestInit).then(
      () => undefined,
      (error: unknown) => error,
    );
    const refused = privateNetworkErrorOf(failure);
    expect(refused, String(failure)).toBeInstanceOf(PrivateNetworkError);
    return refused!;
  }

  it("refuses IP literals before a connection is attempted", async () => {
    const attempts: string[] = [];
    const dispatcher = createGuardedDispatcher({ allowPrivateNetwork: false, connector: loopbackOnly(attempts) });
    expect((await refusal(`http://127.0.0.1:${port}/`, dispatcher)).message).toBe(
      "127.0.0.1 is a loopback address, which this server does not connect to",
    );
    expect((await refusal(`http://[::ffff:127.0.0.1]:${port}/`, dispatcher)).message).toBe(
      "::ffff:7f00:1 is a loopback address, which this server does not connect to",
    );
    const refusedLiterals: Record<string, string> = {
      "198.18.0.1": "a benchmarking address",
      "203.0.113.9": "a documentation address",
      "192.0.0.171": "a reserved address",
      "240.0.0.1": "a reserved address",
      "[2001:db8::1]": "a documentation address",
      "[64:ff9b::a00:1]": "a private address",
      "[2002:a00:1::1]": "a 6to4 tunnel address",
    };
    for (const [host, why] of Object.entries(refusedLiterals))
      expect((await refusal(`http://${host}:${port}/`, dispatcher)).why, host).toBe(why);
    expect(attempts).toEqual([]);
    expect(served).toEqual([]);
  });

  it.runIf(ownAddresses.length > 0)("refuses this machine's own interface addresses before connecting", async () => {
    const attempts: string[] = [];
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetwork: false,
      connector: loopbackOnly(attempts),
      lookup: lookupFrom({ "self.example.test": ownAddresses }),
    });
    for (const address of ownAddresses) {
      const host = address.includes(":") ? `[${address.replace(/%.*$/, "")}]` : address;
      expect(privateAddressKind(address), address).toBeDefined();
      await refusal(`http://${host}:${port}/`, dispatcher);
    }
    expect((await refusal(`http://self.example.test:${port}/`, dispatcher)).host).toBe("self.example.test");
    expect(attempts).toEqual([]);
  });

  it("refuses an interface address that is public, as a literal and as a name's address, before connecting", async () => {
    const attempts: string[] = [];
    const policy = createAddressPolicy(() => ["127.0.0.1", "93.184.216.34"]);
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetwork: false,
      policy,
      connector: loopbackOnly(attempts),
      lookup: lookupFrom({ "self.example.test": ["93.184.216.34"] }),
    });
    expect((await refusal(`http://93.184.216.34:${port}/`, dispatcher)).message).toBe(
      "93.184.216.34 is an address of this machine, which this server does not connect to",
    );
    expect((await refusal(`http://self.example.test:${port}/`, dispatcher)).message).toBe(
      "self.example.test resolves to 93.184.216.34, an address of this machine, which this server does not connect to",
    );
    expect(attempts).toEqual([]);
  });

  it("refuses a name that resolves to a private address, and one with any private address", async () => {
    const attempts: string[] = [];
    const lookup = lookupFrom({
      "app.example.test": ["127.0.0.1"],
      "mixed.example.test": ["93.184.216.34", "10.0.0.7"],
      "bench.example.test": ["198.18.3.4"],
    });
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetwork: false,
      lookup,
      connector: loopbackOnly(attempts),
    });
    const refused = await refusal(`http://app.example.test:${port}/`, dispatcher);
    expect(refused).toMatchObject({ host: "app.example.test", address: "127.0.0.1", why: "a loopback address" });
    expect(refused.message).toBe(
      "app.example.test resolves to 127.0.0.1, a loopback address, which this server does not connect to",
    );
    expect((await refusal(`http://mixed.example.test:${port}/`, dispatcher)).address).toBe("10.0.0.7");
    expect((await refusal(`http://bench.example.test:${port}/`, dispatcher)).why).toBe("a benchmarking address");
    expect(attempts).toEqual([]);
  });

  it("checks every redirect hop", async () => {
    served.length = 0;
    const attempts: string[] = [];
    // The test server on loopback is the one address let through, so the first hop is served.
    const policy = (address: string) => (address === "127.0.0.1" ? undefined : privateAddressKind(address));
    const lookup = lookupFrom({ "internal.example.test": ["10.0.0.7"] });
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetwork: false,
      policy,
      lookup,
      connector: loopbackOnly(attempts),
    });
    const toLiteral = await refusal(
      `http://127.0.0.1:${port}/hop?to=${encodeURIComponent(`http://198.18.0.1:${port}/`)}`,
      dispatcher,
    );
    expect(toLiteral.why).toBe("a benchmarking address");
    const toName = await refusal(
      `http://127.0.0.1:${port}/hop?to=${encodeURIComponent(`http://internal.example.test:${port}/`)}`,
      dispatcher,
    );
    expect(toName.address).toBe("10.0.0.7");
    expect(served).toHaveLength(2);
    expect(attempts).toEqual([]);
  });

  it("refuses through undici's request too (the callback poster's client)", async () => {
    const attempts: string[] = [];
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetwork: false,
      lookup: lookupFrom({ "hook.example.test": ["169.254.169.254"] }),
      connector: loopbackOnly(attempts),
    });
    const failure = await request(`http://hook.example.test:${port}/`, {
      method: "POST",
      body: "{}",
      dispatcher,
    }).catch((error: unknown) => error);
    expect(privateNetworkErrorOf(failure)?.why).toBe("a link-local address");
    expect(attempts).toEqual([]);
  });

  it("connects to allowed addresses, and to anything when private networks are allowed", async () => {
    const narrow = createGuardedDispatcher({
      allowPrivateNetwork: false,
      lookup: lookupFrom({ "allowed.example.test": ["127.0.0.1"] }),
      policy: () => undefined,
    });
    expect(
      await (await fetch(`http://allowed.example.test:${port}/`, { dispatcher: narrow } as RequestInit)).text(),
    ).toBe("reached");
    const open = createGuardedDispatcher({ allowPrivateNetwork: true });
    expect(await (await fetch(`http://127.0.0.1:${port}/`, { dispatcher: open } as RequestInit)).text()).toBe(
      "reached",
    );
    expect(await (await fetch(`http://localhost:${port}/`, { dispatcher: open } as RequestInit)).text()).toBe(
      "reached",
    );
  });
});

describe("the system lookup for node:http clients", () => {
  it("refuses a name that resolves to a loopback address, without connecting", async () => {
    const lookup = guardedSystemLookup();
    const error = await new Promise<Error | null>((resolve) => lookup("localhost", {}, (failure) => resolve(failure)));
    expect(error).toBeInstanceOf(PrivateNetworkError);
  });
});
