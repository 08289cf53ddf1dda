import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION_CODE_TTL_MS } from "../authorization-codes.js";
import { engineName } from "../identity-test-fixture.js";
import { codeFor, redeem } from "./issuer-test-flow.js";
import { openIssuerTestPlane, TEST_PASSWORD, type IssuerTestPlane, type TestIssuerPool } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

const token = (pool: TestIssuerPool, form: Record<string, string>) =>
  plane.request("POST", `${pool.issuer}/token`, { form });
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
const password = (pool: TestIssuerPool, email: string, extra: Record<string, string> = {}) =>
  token(pool, { grant_type: "password", email, password: TEST_PASSWORD, ...extra });

describe(`issuer token endpoint (${engineName})`, () => {
  it("refuses a code presented after its 60 seconds", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const grant = await codeFor(plane, pool, user.email);
    plane.advance(AUTHORIZATION_CODE_TTL_MS + 1);
    const late = await redeem(plane, pool, grant);
    expect([late.status, late.json.error, late.json.error_description]).toEqual([
      401,
      "invalid_grant",
      "the authorization code has expired",
    ]);
  });

  it("a code is single use, bound to its client, and its replay ends the session it started", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const wrongClient = await redeem(plane, pool, await codeFor(plane, pool, user.email), "other-client");
    expect([wrongClient.status, wrongClient.json.error]).toEqual([401, "invalid_grant"]);

    const grant = await codeFor(plane, pool, user.email);
    const first = await redeem(plane, pool, grant);
    expect(first.status).toBe(200);
    expect([first.headers.get("cache-control"), first.headers.get("pragma")]).toEqual(["no-store", "no-cache"]);
    expect((await redeem(plane, pool, grant)).status).toBe(401);
    expect(
      (await token(pool, { grant_type: "refresh_token", refresh_token: first.json.refresh_token as string })).status,
    ).toBe(401);
  });

  it("answers 400 invalid_request or unsupported_grant_type for malformed requests, JSON or form", async () => {
    const pool = await plane.pool();
    const missing = await token(pool, { grant_type: "password", email: "a@example.com" });
    expect([missing.status, missing.json.error]).toEqual([400, "invalid_request"]);
    expect(missing.json.error_description).toMatch(/password/);
    const unsupported = await plane.request("POST", `${pool.issuer}/token`, { json: { grant_type: "implicit" } });
    expect([unsupported.status, unsupported.json.error]).toEqual([400, "unsupported_grant_type"]);
    const garbage = await plane.request("POST", `${pool.issuer}/token`, {
      headers: { "content-type": "application/json" },
      form: undefined,
      json: "not an object",
    });
    expect([garbage.status, garbage.json.error]).toEqual([400, "invalid_request"]);
  });

  it("the password grant: 401 for a bad password or unknown address alike, 403 for banned, unverified, non-member or disabled", async () => {
    const pool = await plane.pool({ settings: { email_verification_required: true } });
    const verified = await plane.user(pool, { emailVerified: true });
    const unverified = await plane.user(pool);
    expect((await password(pool, verified.email)).status).toBe(200);
    const wrong = await token(pool, { grant_type: "password", email: verified.email, password: "wrong password" });
    const unknown = await token(pool, {
      grant_type: "password",
      email: "nobody@example.com",
      password: "wrong password",
    });
    expect([wrong.status, wrong.json]).toEqual([unknown.status, unknown.json]);
    expect((await password(pool, unverified.email)).json.error).toBe("access_denied");
    expect((await password(pool, verified.email, { tenant: "nowhere" })).status).toBe(403);
    await pool.context().users.setBanned(verified.id, true);
    expect((await password(pool, verified.email)).status).toBe(403);

    const open = await plane.pool();
    const user = await plane.user(open);
    await plane.services.connections.upsert(open.context().ref, {
      kind: "local",
      config: { password_grant: false },
      enabled: true,
    });
    expect((await password(open, user.email)).json.error_description).toBe(
      "the password grant is disabled for this pool",
    );
    await plane.services.connections.upsert(open.context().ref, { kind: "local", config: {}, enabled: false });
    expect((await password(open, user.email)).status).toBe(403);
  });

  it("rotates refresh tokens, gives a double submit the same successor, and burns the family on reuse", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const refresh = (value: string) => token(pool, { grant_type: "refresh_token", refresh_token: value });
    const first = (await password(pool, user.email)).json.refresh_token as string;
    const a = await refresh(first);
    const b = await refresh(first);
    expect([a.status, b.status, a.json.refresh_token]).toEqual([200, 200, b.json.refresh_token]);
    const next = (await refresh(a.json.refresh_token as string)).json.refresh_token as string;
    plane.advance(60_000);
    expect((await refresh(first)).status).toBe(401);
    expect((await refresh(next)).status).toBe(401);
  });

  it("refuses a refresh that names another client than the session's, and keeps the token usable", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const refresh = (value: string, clientId?: string) =>
      token(pool, {
        grant_type: "refresh_token",
        refresh_token: value,
        ...(clientId === undefined ? {} : { client_id: clientId }),
      });
    const fromCode = (await redeem(plane, pool, await codeFor(plane, pool, user.email))).json.refresh_token as string;
    const stolen = await refresh(fromCode, "other-client");
    expect([stolen.status, stolen.json.error, stolen.json.error_description]).toEqual([
      401,
      "invalid_grant",
      "client_id is not the one the refresh token was issued to",
    ]);
    const own = await refresh(fromCode, "web");
    expect(own.status).toBe(200);
    expect((await refresh(own.json.refresh_token as string)).status).toBe(200);

    // The password grant issues the session to the client it names, and its tokens say so.
    const direct = await password(pool, user.email, { client_id: "cli" });
    expect(claimsOf(direct.json.access_token as string).client_id).toBe("cli");
    expect((await refresh(direct.json.refresh_token as string, "web")).json.error).toBe("invalid_grant");
    const renewed = await refresh(direct.json.refresh_token as string, "cli");
    expect(claimsOf(renewed.json.access_token as string).client_id).toBe("cli");
    const anonymous = (await password(pool, user.email)).json.refresh_token as string;
    expect((await refresh(anonymous, "cli")).status).toBe(401);
  });

  it("the password grant names its user by email or, as RFC 6749 does, by username", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const grant = (named: Record<string, string>) =>
      token(pool, { grant_type: "password", password: TEST_PASSWORD, ...named });
    expect((await grant({ username: user.email })).status).toBe(200);
    expect((await grant({ username: user.email.toUpperCase(), email: user.email })).status).toBe(200);
    const both = await grant({ username: "someone-else@example.com", email: user.email });
    expect([both.status, both.json.error, both.json.error_description]).toEqual([
      400,
      "invalid_request",
      "body.username: names another user than body.email; send one of them",
    ]);
    const neither = await grant({});
    expect([neither.status, neither.json.error, neither.json.error_description]).toEqual([
      400,
      "invalid_request",
      "body.email: is required (or body.username, as RFC 6749 names it)",
    ]);
    const wrong = await token(pool, { grant_type: "password", username: user.email, password: "wrong password" });
    expect([wrong.status, wrong.json.error]).toEqual([401, "invalid_grant"]);
  });

  it("the password grant with scope openid adds an ID token for the named client, or for the pool", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool, { emailVerified: true });
    const jwks = createLocalJWKSet(
      (await plane.request("GET", `${pool.issuer}/.well-known/jwks.json`)).json as unknown as JSONWebKeySet,
    );
    const named = await password(pool, user.email, { scope: "openid profile", client_id: "cli" });
    const { payload, protectedHeader } = await jwtVerify(named.json.id_token as string, jwks, {
      issuer: pool.issuer,
      audience: "cli",
    });
    expect(protectedHeader.typ).toBe("JWT");
    expect(payload).toMatchObject({
      sub: user.id,
      email: user.email,
      email_verified: true,
      sid: claimsOf(named.json.access_token as string).sid,
    });
    expect(payload.nonce).toBeUndefined();
    expect(payload.auth_time).toBe(payload.iat);

    const anonymous = await password(pool, user.email, { scope: "openid" });
    await expect(
      jwtVerify(anonymous.json.id_token as string, jwks, { issuer: pool.issuer, audience: "pool:app" }),
    ).resolves.toBeDefined();
    // However it is addressed, an ID token does not pass for an access token.
    const asAccess = await plane.request("GET", `${pool.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${anonymous.json.id_token as string}` },
    });
    expect(asAccess.status).toBe(401);
    expect((await password(pool, user.email)).json.id_token).toBeUndefined();
    expect((await password(pool, user.email, { scope: "profile" })).json.id_token).toBeUndefined();
  });

  it("answers 503 with Retry-After while the pool's user store is locked for a migration", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    plane.locked.add(pool.record.id);
    const answer = await password(pool, user.email);
    plane.locked.delete(pool.record.id);
    expect([answer.status, answer.json.error, answer.headers.get("retry-after")]).toEqual([
      503,
      "temporarily_unavailable",
      "2",
    ]);
    expect((await password(pool, user.email)).status).toBe(200);
  });
});
