import { describe, expect, it } from "vitest";
import { acceptsGzip, referencePageCsp } from "./docs-middleware.js";
import type { OpenApiDocument } from "./openapi-document.js";

const withServers = (...urls: string[]): OpenApiDocument => ({
  openapi: "3.1.0",
  info: { title: "t", version: "v1" },
  paths: {},
  servers: urls.map((url) => ({ url })),
});

describe("referencePageCsp", () => {
  it("lets the page fetch from its own origin only while the document's server is relative", () => {
    const csp = referencePageCsp(withServers("/", "/{org}/{pool}"));
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self';");
    expect(csp).not.toMatch(/https?:/);
  });

  it("adds the origin of a configured public URL, and no server whose host is a variable", () => {
    const csp = referencePageCsp(withServers("https://api.example.com/base", "{api_url}", "http://{host}:8080"));
    expect(csp).toContain("connect-src 'self' https://api.example.com;");
  });
});

describe("acceptsGzip", () => {
  it.each([
    ["gzip, deflate, br", true],
    ["br;q=1.0, GZIP;q=0.5", true],
    ["gzip;q=0", false],
    ["identity", false],
    [undefined, false],
  ])("%s: %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
