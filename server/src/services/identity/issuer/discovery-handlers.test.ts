import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { openIssuerTestPlane, type IssuerTestPlane } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

describe(`issuer discovery, keys and branding (${engineName})`, () => {
  it("serves the discovery document and the JWKS with max-age=300", async () => {
    const pool = await plane.pool();
    const discovery = await plane.request("GET", `${pool.issuer}/.well-known/openid-configuration`);
    expect(discovery.headers.get("cache-control")).toBe("max-age=300");
    expect(discovery.json).toMatchObject({
      issuer: pool.issuer,
      authorization_endpoint: `${pool.issuer}/authorize`,
      token_endpoint: `${pool.issuer}/token`,
      jwks_uri: `${pool.issuer}/.well-known/jwks.json`,
      userinfo_endpoint: `${pool.issuer}/userinfo`,
      response_types_supported: ["code"],
      grant_types_supported: ["password", "refresh_token", "authorization_code"],
      code_challenge_methods_supported: ["S256"],
      id_token_signing_alg_values_supported: ["EdDSA"],
      token_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = await plane.request("GET", `${pool.issuer}/.well-known/jwks.json`);
    expect(jwks.headers.get("cache-control")).toBe("max-age=300");
    const keys = jwks.json.keys as Record<string, string>[];
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
  });

  it("shows the live password minimum and the branding, ignoring malformed members", async () => {
    const pool = await plane.pool({
      displayName: "Shop",
      policies: { password: { min_length: 14 } },
      settings: { signup_enabled: false },
      branding: { primary_color: "#00aa00", page_background_color: "red", logo_url: "javascript:alert(1)" },
    });
    const branding = await plane.request("GET", `${pool.issuer}/branding`);
    expect(branding.json).toEqual({
      display_name: "Shop",
      primary_color: "#00aa00",
      password_min_length: 14,
      signup_enabled: false,
    });
  });

  it("answers 404 {error} for an unknown pool, an unknown organization and another organization's pool", async () => {
    const pool = await plane.pool();
    const other = await plane.pool();
    const base = pool.issuer.slice(0, pool.issuer.length - `/${pool.orgName}/app`.length);
    for (const path of [`/${pool.orgName}/nope`, `/no-such-org/app`]) {
      const answer = await plane.request("GET", `${base}${path}/.well-known/jwks.json`);
      expect(answer.status).toBe(404);
      expect(answer.json.error).toMatch(/^no pool/);
    }
    // Both organizations have a pool named "app": each issuer path reaches its own.
    const mine = await plane.request("GET", `${pool.issuer}/.well-known/jwks.json`);
    const theirs = await plane.request("GET", `${other.issuer}/.well-known/jwks.json`);
    expect(mine.json).not.toEqual(theirs.json);
  });
});
