import { createHash } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AUTHORIZATION_CODE_TTL_MS,
  createAuthorizationCodes,
  type AuthorizationCodes,
  type CodeGrant,
} from "./authorization-codes.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createLoginTransactions, LOGIN_TRANSACTION_TTL_MS, type LoginTransactions } from "./login-transactions.js";
import { checkCodeChallenge, pkceMatches } from "./pkce.js";
import { createRefreshFamilies, type RefreshFamilies } from "./refresh-families.js";

let fixture: IdentityTestFixture;
let clock = Date.now();
let codes: AuthorizationCodes;
let logins: LoginTransactions;
let families: RefreshFamilies;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  codes = createAuthorizationCodes(fixture.database.db, { now: () => clock });
  logins = createLoginTransactions(fixture.database.db, codes, { now: () => clock });
  families = createRefreshFamilies(fixture.database.db, fixture.box, { now: () => clock });
});
afterAll(() => fixture.close());

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const challenge = createHash("sha256").update(verifier).digest("base64url");
const grant: CodeGrant = {
  userId: "5a1d3c2b-4e6f-4a8b-9c0d-1e2f3a4b5c6d",
  clientId: "web",
  redirectUri: "https://app.example/callback",
  codeChallenge: challenge,
  scope: "openid",
  nonce: "n-0S6_WzA2Mj",
  tenant: "acme",
  authTimeMs: 1_700_000_000_000,
};
const exchangeOf = (code: string) => ({
  code,
  clientId: "web",
  redirectUri: "https://app.example/callback",
  codeVerifier: verifier,
});
const invalidGrant = { code: Code.Unauthenticated, oauthError: "invalid_grant" };

describe("PKCE", () => {
  it("accepts the RFC 7636 example pair and refuses anything else", () => {
    expect(challenge).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(pkceMatches(verifier, challenge)).toBe(true);
    expect(pkceMatches(`${verifier.slice(0, -1)}l`, challenge)).toBe(false);
    expect(pkceMatches("short", challenge)).toBe(false);
    expect(pkceMatches(verifier, "x")).toBe(false);
    // The challenge itself is a well-formed verifier: accepting it would be the `plain` method.
    expect(pkceMatches(challenge, challenge)).toBe(false);
    expect(checkCodeChallenge(challenge, "S256")).toBe(challenge);
    expect(() => checkCodeChallenge(challenge, "plain")).toThrow(/code_challenge_method must be S256/);
    expect(() => checkCodeChallenge("a".repeat(42), "S256")).toThrow(/code_challenge must be 43 to 128/);
    expect(() => checkCodeChallenge("a".repeat(129), "S256")).toThrow(/code_challenge/);
  });
});

describe(`authorization codes (${engineName})`, () => {
  it("exchanges a code once for a session carrying the request's client, tenant and scope", async () => {
    const { ref } = await fixture.newPool();
    const code = await codes.issue(ref, grant);
    const { grant: granted, issued } = await codes.exchange(ref, exchangeOf(code));
    expect(granted).toEqual(grant);
    expect(issued.session).toMatchObject({
      userId: grant.userId,
      clientId: "web",
      tenant: "acme",
      scope: "openid",
      authTime: grant.authTimeMs,
    });
    expect((await families.rotate(ref, issued.refreshToken)).replayed).toBe(false);
  });

  it("revokes the session a code started when the code comes back", async () => {
    const { ref } = await fixture.newPool();
    const code = await codes.issue(ref, grant);
    const { issued } = await codes.exchange(ref, exchangeOf(code));
    await expect(codes.exchange(ref, exchangeOf(code))).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: expect.stringContaining("already used"),
    });
    expect((await families.get(ref, issued.session.id))?.revokedAt).toBeGreaterThan(0);
    await expect(families.rotate(ref, issued.refreshToken)).rejects.toMatchObject(invalidGrant);
  });

  it.each([
    ["client_id", { clientId: "other" }],
    ["redirect_uri", { redirectUri: "https://app.example/other" }],
    ["code_verifier", { codeVerifier: "x".repeat(43) }],
  ])("refuses a %s mismatch and consumes the code", async (field, change) => {
    const { ref } = await fixture.newPool();
    const code = await codes.issue(ref, grant);
    await expect(codes.exchange(ref, { ...exchangeOf(code), ...change })).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: expect.stringContaining(field),
    });
    await expect(codes.exchange(ref, exchangeOf(code))).rejects.toMatchObject({
      rawMessage: expect.stringContaining("already used"),
    });
  });

  it("refuses an expired code, an unknown code and another pool's code", async () => {
    const { ref } = await fixture.newPool();
    const { ref: other } = await fixture.newPool();
    const stale = await codes.issue(ref, grant);
    const fresh = await codes.issue(ref, grant);
    await expect(codes.exchange(other, exchangeOf(fresh))).rejects.toMatchObject({
      rawMessage: expect.stringContaining("not known"),
    });
    await expect(codes.exchange(ref, exchangeOf("unknown"))).rejects.toMatchObject(invalidGrant);
    clock += AUTHORIZATION_CODE_TTL_MS;
    await expect(codes.exchange(ref, exchangeOf(stale))).rejects.toMatchObject({
      rawMessage: expect.stringContaining("expired"),
    });
  });

  it("gives one session to concurrent exchanges of one code", async () => {
    const { ref } = await fixture.newPool();
    const code = await codes.issue(ref, grant);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => codes.exchange(ref, exchangeOf(code))));
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
  });
});

describe(`login transactions (${engineName})`, () => {
  const request = {
    clientId: "web",
    redirectUri: "https://app.example/callback",
    state: "xyz",
    codeChallenge: challenge,
    scope: "openid",
    nonce: "n",
    tenant: "",
  };

  it("keeps the request for the hosted page and completes once with a code", async () => {
    const { ref } = await fixture.newPool();
    const handle = await logins.begin(ref, request);
    expect(await logins.get(ref, handle)).toEqual({ request, expired: false });
    const { code, request: completed } = await logins.complete(ref, handle, {
      userId: grant.userId,
      authTimeMs: clock,
    });
    expect(completed).toEqual(request);
    expect(await logins.get(ref, handle)).toBeUndefined();
    await expect(logins.complete(ref, handle, { userId: grant.userId, authTimeMs: clock })).rejects.toMatchObject({
      code: Code.NotFound,
    });
    const { grant: granted } = await codes.exchange(ref, exchangeOf(code));
    expect(granted).toMatchObject({ userId: grant.userId, nonce: "n", tenant: "" });
  });

  it("answers login_session_expired after 30 minutes", async () => {
    const { ref } = await fixture.newPool();
    const handle = await logins.begin(ref, request);
    clock += LOGIN_TRANSACTION_TTL_MS;
    expect(await logins.get(ref, handle)).toMatchObject({ expired: true });
    await expect(logins.complete(ref, handle, { userId: grant.userId, authTimeMs: clock })).rejects.toMatchObject({
      oauthError: "access_denied",
      rawMessage: "login_session_expired",
    });
  });
});
