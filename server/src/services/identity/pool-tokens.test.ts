import { Code } from "@connectrpc/connect";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createPoolKeys, type PoolKeys } from "./pool-keys.js";
import {
  accessTokenClaims,
  issueAccessToken,
  issueIdToken,
  poolIssuer,
  verifyAccessToken,
  type PoolIssuer,
  type TokenSubject,
} from "./pool-tokens.js";

let fixture: IdentityTestFixture;
let keys: PoolKeys;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  keys = createPoolKeys(fixture.database.db, fixture.box);
});
afterAll(() => fixture.close());

const subject: TokenSubject = {
  userId: "2f9c1b0e-8d2a-4c55-9a70-3c2f0d7e1a11",
  email: "Ada@example.com",
  emailVerified: true,
  appRoles: ["editor", "unknown-role"],
  memberships: [
    { slug: "acme", roles: ["admin"] },
    { slug: "globex", roles: ["viewer"] },
  ],
};

async function issuerOf(name = "app"): Promise<PoolIssuer> {
  const { record } = await fixture.newPool(name);
  const updated = await fixture.pools.update(record.orgId, record.name, {
    roleCatalog: {
      roles: {
        editor: { permissions: ["docs:write", "docs:read"] },
        viewer: { permissions: ["docs:read"] },
        admin: { permissions: ["docs:read", "docs:write", "members:manage"] },
      },
    },
  });
  return poolIssuer("https://id.example.com/", "acme-org", updated!);
}

describe(`pool tokens (${engineName})`, () => {
  it("mints an access token with the issuer, audience, lifetime, permissions and tenants", async () => {
    const issuer = await issuerOf("shop");
    const now = Date.now();
    const claims = accessTokenClaims(issuer, { subject, sessionId: "s1" }, now);
    const token = await issueAccessToken(keys, issuer, claims);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(await keys.jwks(issuer.pool)), {
      issuer: "https://id.example.com/acme-org/shop",
      audience: "pool:shop",
    });
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", typ: "at+jwt" });
    expect(payload).toEqual({
      iss: "https://id.example.com/acme-org/shop",
      sub: subject.userId,
      aud: "pool:shop",
      iat: Math.floor(now / 1000),
      exp: Math.floor(now / 1000) + 900,
      jti: expect.any(String),
      sid: "s1",
      email: "Ada@example.com",
      email_verified: true,
      permissions: ["docs:read", "docs:write"],
      tenants: {
        acme: { roles: ["admin"], permissions: ["docs:read", "docs:write", "members:manage"] },
        globex: { roles: ["viewer"], permissions: ["docs:read"] },
      },
    });
  });

  it("pins a token to one tenant, and refuses a tenant the user is not in", async () => {
    const issuer = await issuerOf();
    const pinned = accessTokenClaims(
      issuer,
      { subject, sessionId: "s", tenant: "globex", clientId: "web" },
      Date.now(),
    );
    expect(pinned).toMatchObject({ tenant: "globex", client_id: "web", tenants: { globex: { roles: ["viewer"] } } });
    expect(Object.keys(pinned.tenants)).toEqual(["globex"]);
    expect(() => accessTokenClaims(issuer, { subject, sessionId: "s", tenant: "initech" }, Date.now())).toThrow(
      expect.objectContaining({ oauthError: "access_denied", code: Code.PermissionDenied }),
    );
  });

  it("mints an ID token for the client with the nonce and auth_time", async () => {
    const issuer = await issuerOf();
    const token = await issueIdToken(
      keys,
      issuer,
      { subject, clientId: "web-app", nonce: "n-123", authTimeMs: 1_700_000_000_500, sessionId: "s" },
      Date.now(),
    );
    expect(decodeProtectedHeader(token).typ).toBe("JWT");
    expect(decodeJwt(token)).toMatchObject({
      aud: "web-app",
      nonce: "n-123",
      auth_time: 1_700_000_000,
      sub: subject.userId,
      email_verified: true,
    });
  });

  it("verifies its own access tokens and refuses expired, foreign-pool, ID and tampered tokens", async () => {
    const issuer = await issuerOf();
    const now = Date.now();
    const token = await issueAccessToken(keys, issuer, accessTokenClaims(issuer, { subject, sessionId: "s" }, now));
    expect(await verifyAccessToken(keys, issuer, token, now)).toMatchObject({ sub: subject.userId, sid: "s" });

    await expect(verifyAccessToken(keys, issuer, token, now + 901_000)).rejects.toMatchObject({
      code: Code.Unauthenticated,
      rawMessage: expect.stringContaining("expired"),
    });

    // Same organization name and pool name shape, another pool: its keys do not verify this one's tokens.
    const other = await issuerOf();
    await expect(verifyAccessToken(keys, other, token, now)).rejects.toMatchObject({ code: Code.Unauthenticated });

    const idToken = await issueIdToken(
      keys,
      issuer,
      { subject, clientId: "pool:app", nonce: "", authTimeMs: now, sessionId: "s" },
      now,
    );
    await expect(verifyAccessToken(keys, issuer, idToken, now)).rejects.toMatchObject({ code: Code.Unauthenticated });

    const [header, , signature] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), permissions: ["everything"] })).toString(
      "base64url",
    );
    await expect(verifyAccessToken(keys, issuer, `${header}.${forged}.${signature}`, now)).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
    await expect(verifyAccessToken(keys, issuer, "not-a-jwt", now)).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });
});
