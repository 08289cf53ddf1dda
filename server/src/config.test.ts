import { describe, expect, it } from "vitest";
import { ConfigError, parseServeConfig } from "./config.js";

describe("serve configuration", () => {
  it("trusts no proxy by default, and the listed addresses and ranges from the flag or the environment", () => {
    expect(parseServeConfig([], {}).trustedProxies).toBeUndefined();
    const fromFlag = parseServeConfig(["--trusted-proxies", "10.0.0.0/8, ::1"], {}).trustedProxies;
    expect([fromFlag?.check("10.20.30.40"), fromFlag?.check("::1", "ipv6"), fromFlag?.check("192.0.2.1")]).toEqual([
      true,
      true,
      false,
    ]);
    expect(parseServeConfig([], { PLATFORM_TRUSTED_PROXIES: "192.0.2.1" }).trustedProxies?.check("192.0.2.1")).toBe(
      true,
    );
  });

  it("refuses a proxy entry that is not an address or range, naming the setting and the entry", () => {
    const parse = () => parseServeConfig(["--trusted-proxies", "10.0.0.0/8,proxy.internal"], {});
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(
      '--trusted-proxies (PLATFORM_TRUSTED_PROXIES): "proxy.internal" is not an IP address or CIDR range',
    );
  });

  it("runs 8 threads at once by default, at least 1, from the flag or the environment", () => {
    expect(parseServeConfig([], {}).threadConcurrency).toBe(8);
    expect(parseServeConfig(["--thread-concurrency", "1"], {}).threadConcurrency).toBe(1);
    expect(parseServeConfig([], { PLATFORM_THREAD_CONCURRENCY: "32" }).threadConcurrency).toBe(32);
    expect(() => parseServeConfig(["--thread-concurrency", "0"], {})).toThrow(
      '--thread-concurrency (PLATFORM_THREAD_CONCURRENCY) must be at least 1, got "0"',
    );
    expect(() => parseServeConfig(["--thread-concurrency", "many"], {})).toThrow(
      '--thread-concurrency (PLATFORM_THREAD_CONCURRENCY) must be an integer from 0 to 1024, got "many"',
    );
  });

  it("executes 8 queued action runs per process and 4 per organization by default, at least 1 each", () => {
    expect(parseServeConfig([], {})).toMatchObject({ actionConcurrency: 8, actionOrgConcurrency: 4 });
    expect(parseServeConfig(["--action-concurrency", "2"], { PLATFORM_ACTION_ORG_CONCURRENCY: "16" })).toMatchObject({
      actionConcurrency: 2,
      actionOrgConcurrency: 16,
    });
    expect(() => parseServeConfig(["--action-org-concurrency", "0"], {})).toThrow(
      '--action-org-concurrency (PLATFORM_ACTION_ORG_CONCURRENCY) must be at least 1, got "0"',
    );
  });

  it("bounds every thread by default, and takes other limits from flags or the environment", () => {
    expect(parseServeConfig([], {}).threadLimits).toEqual({
      memoryBytes: 128 * 1024 * 1024,
      concurrentIterations: 16,
      expressions: { cost: 100_000, timeMs: 30 },
    });
    const set = parseServeConfig(
      ["--thread-memory-bytes", "1048576", "--thread-concurrent-iterations", "4", "--expression-cost-limit", "5000"],
      { PLATFORM_EXPRESSION_TIME_LIMIT_MS: "20" },
    );
    expect(set.threadLimits).toEqual({
      memoryBytes: 1_048_576,
      concurrentIterations: 4,
      expressions: { cost: 5_000, timeMs: 20 },
    });
  });

  it("refuses a thread limit of zero, naming the setting", () => {
    expect(() => parseServeConfig(["--thread-concurrent-iterations", "0"], {})).toThrow(
      '--thread-concurrent-iterations (PLATFORM_THREAD_CONCURRENT_ITERATIONS) must be at least 1, got "0"',
    );
    expect(() => parseServeConfig([], { PLATFORM_THREAD_MEMORY_BYTES: "lots" })).toThrow(ConfigError);
  });

  it("scans registry images one at a time with no feed by default; the feed folder and refresh from flags or the environment", () => {
    expect(parseServeConfig([], {}).registryScan).toEqual({
      advisoryDir: undefined,
      advisoryRefreshMs: 3_600_000,
      concurrency: 1,
    });
    expect(
      parseServeConfig(["--registry-advisory-dir", "/srv/osv", "--registry-scan-concurrency", "2"], {
        PLATFORM_REGISTRY_ADVISORY_REFRESH_MS: "60000",
      }).registryScan,
    ).toEqual({ advisoryDir: "/srv/osv", advisoryRefreshMs: 60_000, concurrency: 2 });
    expect(() => parseServeConfig(["--registry-scan-concurrency", "0"], {})).toThrow(
      '--registry-scan-concurrency (PLATFORM_REGISTRY_SCAN_CONCURRENCY) must be at least 1, got "0"',
    );
  });

  it("collects registry garbage hourly after a day's grace and expires uploads after a week, unless told otherwise", () => {
    expect(parseServeConfig([], {}).registryGc).toEqual({
      graceMs: 86_400_000,
      uploadExpiryMs: 604_800_000,
      intervalMs: 3_600_000,
    });
    expect(
      parseServeConfig(["--registry-gc-grace-ms", "1000", "--registry-gc-interval-ms", "500"], {
        PLATFORM_REGISTRY_UPLOAD_EXPIRY_MS: "2000",
      }).registryGc,
    ).toEqual({ graceMs: 1000, uploadExpiryMs: 2000, intervalMs: 500 });
    expect(() => parseServeConfig(["--registry-gc-grace-ms", "0"], {})).toThrow(ConfigError);
  });

  it("stores objects in --blob-dir by default, or where --blob-url says, and refuses a bad URL naming the flag", () => {
    expect(parseServeConfig(["--data-dir", "/srv/platform"], {}).blob).toEqual({
      kind: "filesystem",
      dir: "/srv/platform/blobs",
    });
    expect(parseServeConfig(["--blob-url", "file:///var/objects"], {}).blob).toEqual({
      kind: "filesystem",
      dir: "/var/objects",
    });
    expect(
      parseServeConfig([], {
        PLATFORM_BLOB_URL:
          "s3://platform-objects/prod/eu?endpoint=http://127.0.0.1:9000&region=eu-west-1&forcePathStyle=true",
      }).blob,
    ).toEqual({
      kind: "s3",
      bucket: "platform-objects",
      prefix: "prod/eu/",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-1",
      forcePathStyle: true,
    });
    expect(parseServeConfig(["--blob-url", "s3://objects"], {}).blob).toMatchObject({
      prefix: "",
      endpoint: undefined,
    });
    for (const [url, message] of [
      ["http://objects", "scheme http: is not file: or s3:"],
      ["s3://A_bucket", "is not a valid bucket name"],
      ["s3://objects?endpoint=ftp://x", "must be an http:// or https:// base address"],
      ["s3://objects?secret=1", 'unknown parameter "secret"'],
      ["s3://key:secret@objects", "carries no credentials"],
      ["s3://objects/a%5Cb", "the prefix"],
      ["not a url", "is not a URL"],
    ]) {
      const parse = () => parseServeConfig(["--blob-url", url!], {});
      expect(parse).toThrow(ConfigError);
      expect(parse).toThrow(`--blob-url (PLATFORM_BLOB_URL): `);
      expect(parse).toThrow(message!);
    }
  });
});
