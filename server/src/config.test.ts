import { describe, expect, it } from "vitest";
import { ConfigError, parseServeConfig } from "./config.js";

describe("serve configuration", () => {
  it("trusts no proxy by default, and the listed addresses and ranges from the flag or the environment", () => {
    expect(parseServeConfig([], {}).trustedProxies).toBeUndefined();
    const fromFlag = parseServeConfig(["--trusted-proxies", "10.0.0.0/8, ::1"], {}).trustedProxies;
    expect([fromFlag?.check("10.20.30.40"), fromFlag?.check("::1", "ipv6"), fromFlag?.check("192.0.2.1")]).toEqual([true, true, false]);
    expect(parseServeConfig([], { PLATFORM_TRUSTED_PROXIES: "192.0.2.1" }).trustedProxies?.check("192.0.2.1")).toBe(true);
  });

  it("refuses a proxy entry that is not an address or range, naming the setting and the entry", () => {
    const parse = () => parseServeConfig(["--trusted-proxies", "10.0.0.0/8,proxy.internal"], {});
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow('--trusted-proxies (PLATFORM_TRUSTED_PROXIES): "proxy.internal" is not an IP address or CIDR range');
  });

  it("runs 8 threads at once by default, at least 1, from the flag or the environment", () => {
    expect(parseServeConfig([], {}).threadConcurrency).toBe(8);
    expect(parseServeConfig(["--thread-concurrency", "1"], {}).threadConcurrency).toBe(1);
    expect(parseServeConfig([], { PLATFORM_THREAD_CONCURRENCY: "32" }).threadConcurrency).toBe(32);
    expect(parseServeConfig(["--thread-concurrency", "0"], {}).threadConcurrency).toBe(1);
    expect(() => parseServeConfig(["--thread-concurrency", "many"], {})).toThrow('--thread-concurrency (PLATFORM_THREAD_CONCURRENCY) must be an integer from 0 to 1024, got "many"');
  });
});
