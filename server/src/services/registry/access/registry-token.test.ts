import { describe, expect, it } from "vitest";
import { createRegistryTokens, REGISTRY_TOKEN_TTL_SECONDS } from "./registry-token.js";

describe("registry tokens", () => {
  const key = new Uint8Array(32).fill(7);
  const claims = { keyId: "k1", orgId: "o1", orgName: "acme", access: { "acme/app": ["pull", "push"] } };

  it("verifies what it issued, with the claims and a five-minute expiry", () => {
    let now = 1_700_000_000_000;
    const tokens = createRegistryTokens(key, () => now);
    const issued = tokens.issue(claims);
    expect(issued.expiresIn).toBe(REGISTRY_TOKEN_TTL_SECONDS);
    expect(issued.issuedAt).toBe(new Date(now).toISOString());
    expect(tokens.verify(issued.token)).toEqual({ ...claims, exp: now / 1000 + 300 });
    now += 299_000;
    expect(tokens.verify(issued.token)).toBeDefined();
    now += 1_000;
    expect(tokens.verify(issued.token)).toBeUndefined();
  });

  it("refuses tokens signed with another key or altered", () => {
    const token = createRegistryTokens(key).issue(claims).token;
    expect(createRegistryTokens(new Uint8Array(32).fill(8)).verify(token)).toBeUndefined();
    const [header, , signature] = token.split(".");
    const widened = Buffer.from(JSON.stringify({ ...claims, access: { "acme/app": ["delete"] }, exp: 9e9 })).toString(
      "base64url",
    );
    // The same instance, which holds the genuine token verified: only that exact token passes.
    const tokens = createRegistryTokens(key);
    expect(tokens.verify(token)).toBeDefined();
    expect(tokens.verify(`${header}.${widened}.${signature}`)).toBeUndefined();
    expect(tokens.verify(`${token}x`)).toBeUndefined();
    expect(tokens.verify("not.a.token")).toBeUndefined();
    expect(tokens.verify("")).toBeUndefined();
  });
});
