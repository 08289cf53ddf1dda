import { randomBytes } from "node:crypto";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlatformClient, type PlatformClient } from "../../sdk/src/index.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

// The issuer through the binary: an OpenID Connect client library (oauth4webapi) for the flows a
// real client runs, the hosted login form posted with plain HTTP as a browser would, and plain
// HTTP for every refusal. Pools and users are made with the admin plane. The file runs a server
// of its own, without SMTP, so it can read e-mailed links from the server's log.

let server: StartedServer;
const identityUrl = () => server.urls.identity!;
const REDIRECT_URI = "http://localhost:9999/callback";
const CLIENT: oauth.Client = { client_id: "web-app" };
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const PASSWORD = "correct horse battery staple";

interface TestOrganization {
  readonly name: string;
  readonly client: PlatformClient;
}

let acme: TestOrganization;

async function createOrganization(prefix: string): Promise<TestOrganization> {
  const name = `${prefix}-${randomBytes(4).toString("hex")}`;
  const result = await runAdmin(server.dataDir, ["create-org", name]);
  if (result.code !== 0) throw new Error(`admin create-org failed (${result.code}): ${result.stderr}`);
  const { apiKey } = result.json as { apiKey: string };
  return { name, client: createPlatformClient({ apiUrl: server.urls.api!, token: apiKey, organization: name }) };
}

interface TestPool {
  readonly name: string;
  readonly issuer: string;
  readonly as: oauth.AuthorizationServer;
}

async function createPool(name: string, documents: { settings?: object; policies?: object } = {}): Promise<TestPool> {
  const admin = acme.client.identityAdmin;
  await admin.createPool({ body: { name } });
  await admin.updatePool({
    path: { pool: name },
    body: {
      settingsJson: JSON.stringify({ redirect_uris: [REDIRECT_URI], ...documents.settings }),
      policiesJson: JSON.stringify({ cors_allowed_origins: ["http://app.example"], ...documents.policies }),
    },
  });
  const issuer = `${identityUrl()}/${acme.name}/${name}`;
  const as = await oauth.processDiscoveryResponse(
    new URL(issuer),
    await oauth.discoveryRequest(new URL(issuer), { algorithm: "oidc", ...insecure }),
  );
  return { name, issuer, as };
}

async function createUser(
  pool: TestPool,
  email = `u-${randomBytes(4).toString("hex")}@example.com`,
): Promise<{ id: string; email: string }> {
  const user = await acme.client.identityAdmin.createUser({
    path: { pool: pool.name },
    body: { email, password: PASSWORD },
  });
  return { id: user.id, email };
}

async function post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: "POST", body: new URLSearchParams(form), headers, redirect: "manual" });
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json")
    ? (JSON.parse(text) as Record<string, unknown>)
    : undefined;
  return { status: response.status, headers: response.headers, text, json: json ?? {} };
}

async function passwordGrant(pool: TestPool, email: string) {
  return post(`${pool.issuer}/token`, { grant_type: "password", email, password: PASSWORD });
}

async function refresh(pool: TestPool, refreshToken: string) {
  return post(`${pool.issuer}/token`, { grant_type: "refresh_token", refresh_token: refreshToken });
}

/** GET /authorize with a fresh PKCE pair; answers the redirect and what the client keeps. */
async function startAuthorization(pool: TestPool, overrides: Record<string, string> = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(pool.as.authorization_endpoint!);
  const params = {
    response_type: "code",
    client_id: CLIENT.client_id,
    redirect_uri: REDIRECT_URI,
    state,
    nonce,
    scope: "openid",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...overrides,
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: "manual" });
  return { response, verifier, state, nonce, location: response.headers.get("location") ?? "" };
}

/** Follows the redirect to the hosted page, reads its form and posts it as a browser does. */
async function signInOnHostedPage(location: string, email: string, password = PASSWORD) {
  const page = await fetch(location);
  expect(page.status).toBe(200);
  const html = await page.text();
  const transaction = /name="transaction" value="([^"]+)"/.exec(html)?.[1];
  expect(transaction).toBeDefined();
  return post(new URL("login", location).toString(), { transaction: transaction!, email, password });
}

/** The whole browser half of the code flow: answers the callback URL. */
async function codeFlow(pool: TestPool, email: string) {
  const started = await startAuthorization(pool);
  expect(started.response.status).toBe(302);
  const login = await signInOnHostedPage(started.location, email);
  expect(login.status).toBe(303);
  return { ...started, callback: new URL(login.headers.get("location")!) };
}

async function exchange(pool: TestPool, flow: Awaited<ReturnType<typeof codeFlow>>) {
  const params = oauth.validateAuthResponse(pool.as, CLIENT, flow.callback, flow.state);
  return oauth.authorizationCodeGrantRequest(
    pool.as,
    CLIENT,
    oauth.None(),
    params,
    REDIRECT_URI,
    flow.verifier,
    insecure,
  );
}

beforeAll(async () => {
  // The tests' own address is trusted as a proxy, so a test can name the client address.
  server = await startPlatformServer(["--trusted-proxies", "127.0.0.1,::1"]);
  acme = await createOrganization("issuer");
}, 120_000);
afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describe("identity issuer: discovery and keys", () => {
  it("serves discovery and the JWKS with max-age=300, and 404 for an unknown or foreign pool", async () => {
    const pool = await createPool("disco");
    expect(pool.as).toMatchObject({
      issuer: pool.issuer,
      token_endpoint: `${pool.issuer}/token`,
      userinfo_endpoint: `${pool.issuer}/userinfo`,
      code_challenge_methods_supported: ["S256"],
      id_token_signing_alg_values_supported: ["EdDSA"],
      grant_types_supported: ["password", "refresh_token", "authorization_code"],
    });
    const discovery = await fetch(`${pool.issuer}/.well-known/openid-configuration`);
    expect(discovery.headers.get("cache-control")).toBe("max-age=300");
    const jwks = await fetch(pool.as.jwks_uri!);
    expect(jwks.headers.get("cache-control")).toBe("max-age=300");
    expect(((await jwks.json()) as { keys: unknown[] }).keys[0]).toMatchObject({
      kty: "OKP",
      crv: "Ed25519",
      alg: "EdDSA",
      use: "sig",
    });

    const missing = await fetch(`${identityUrl()}/${acme.name}/nope/.well-known/jwks.json`);
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { error: `no pool "nope" in organization "${acme.name}"` },
    ]);
    const other = await createOrganization("issuer-other");
    const foreign = await fetch(`${identityUrl()}/${other.name}/disco/.well-known/openid-configuration`);
    expect(foreign.status).toBe(404);
  });

  it("GET /branding shows the display name and the live password minimum", async () => {
    const pool = await createPool("brand", { policies: { password: { min_length: 12 } } });
    await acme.client.identityAdmin.updatePool({
      path: { pool: "brand" },
      body: { displayName: "Brand <Co>", brandingJson: JSON.stringify({ primary_color: "#112233" }) },
    });
    const branding = await fetch(`${pool.issuer}/branding`);
    expect(await branding.json()).toEqual({
      display_name: "Brand <Co>",
      primary_color: "#112233",
      password_min_length: 12,
      signup_enabled: true,
    });
  });
});

describe("identity issuer: code flow with PKCE", () => {
  it("signs in on the hosted page, exchanges the code, validates the ID token with the JWKS, refreshes and reads /user", async () => {
    const pool = await createPool("web");
    const user = await createUser(pool);
    const flow = await codeFlow(pool, user.email);
    expect(flow.callback.origin + flow.callback.pathname).toBe(REDIRECT_URI);
    expect(flow.callback.searchParams.get("iss")).toBe(pool.issuer);
    expect(flow.callback.searchParams.get("state")).toBe(flow.state);

    const tokens = await oauth.processAuthorizationCodeResponse(pool.as, CLIENT, await exchange(pool, flow), {
      expectedNonce: flow.nonce,
      requireIdToken: true,
    });
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 900 });
    const { payload: idToken } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(pool.as.jwks_uri!)), {
      issuer: pool.issuer,
      audience: CLIENT.client_id,
    });
    expect(idToken).toMatchObject({ sub: user.id, nonce: flow.nonce, email: user.email });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims.sub).toBe(user.id);

    const refreshed = await oauth.processRefreshTokenResponse(
      pool.as,
      CLIENT,
      await oauth.refreshTokenGrantRequest(pool.as, CLIENT, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const { payload: access } = await jwtVerify(
      refreshed.access_token,
      createRemoteJWKSet(new URL(pool.as.jwks_uri!)),
      { issuer: pool.issuer, audience: "pool:web", typ: "at+jwt" },
    );
    expect(access).toMatchObject({ sub: user.id, client_id: CLIENT.client_id });

    const me = await fetch(`${pool.issuer}/user`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      claims: { sub: user.id, aud: "pool:web" },
      user: { id: user.id, email: user.email },
    });

    // The discovery document's UserInfo endpoint, as the client library calls and checks it.
    const info = await oauth.processUserInfoResponse(
      pool.as,
      CLIENT,
      claims.sub,
      await oauth.userInfoRequest(pool.as, CLIENT, refreshed.access_token, insecure),
    );
    expect(info).toEqual({ sub: user.id, email: user.email, email_verified: false });
  });

  it("an unlisted redirect_uri gets an error page and never a redirect", async () => {
    const pool = await createPool("unlisted");
    const { response } = await startAuthorization(pool, { redirect_uri: "http://evil.example/callback" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("a bad PKCE challenge redirects back with invalid_request, state and iss; a wrong verifier is invalid_grant", async () => {
    const pool = await createPool("pkce");
    const short = await startAuthorization(pool, { code_challenge: "too-short" });
    expect(short.response.status).toBe(302);
    const back = new URL(short.location);
    expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("iss")]).toEqual([
      "invalid_request",
      short.state,
      pool.issuer,
    ]);
    const plain = await startAuthorization(pool, { code_challenge_method: "plain" });
    expect(new URL(plain.location).searchParams.get("error")).toBe("invalid_request");

    const user = await createUser(pool);
    const flow = await codeFlow(pool, user.email);
    const wrong = await post(`${pool.issuer}/token`, {
      grant_type: "authorization_code",
      code: flow.callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT.client_id,
      code_verifier: oauth.generateRandomCodeVerifier(),
    });
    expect([wrong.status, wrong.json.error]).toEqual([401, "invalid_grant"]);
    expect(wrong.json.error_description).toMatch(/code_verifier/);

    // The challenge sent back as the verifier is the `plain` method, which is refused.
    const plainFlow = await codeFlow(pool, user.email);
    const echoed = await post(`${pool.issuer}/token`, {
      grant_type: "authorization_code",
      code: plainFlow.callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT.client_id,
      code_verifier: await oauth.calculatePKCECodeChallenge(plainFlow.verifier),
    });
    expect([echoed.status, echoed.json.error, echoed.json.error_description]).toEqual([
      401,
      "invalid_grant",
      "code_verifier does not match the code_challenge",
    ]);
  });

  it("a replayed code is refused and revokes the session the first exchange started", async () => {
    const pool = await createPool("replay");
    const user = await createUser(pool);
    const flow = await codeFlow(pool, user.email);
    const form = {
      grant_type: "authorization_code",
      code: flow.callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: CLIENT.client_id,
      code_verifier: flow.verifier,
    };
    const first = await post(`${pool.issuer}/token`, form);
    expect(first.status).toBe(200);
    const again = await post(`${pool.issuer}/token`, form);
    expect([again.status, again.json.error]).toEqual([401, "invalid_grant"]);
    const revoked = await refresh(pool, first.json.refresh_token as string);
    expect([revoked.status, revoked.json.error]).toEqual([401, "invalid_grant"]);
  });

  it("a code is bound to its client_id", async () => {
    const pool = await createPool("bound");
    const user = await createUser(pool);
    const flow = await codeFlow(pool, user.email);
    const other = await post(`${pool.issuer}/token`, {
      grant_type: "authorization_code",
      code: flow.callback.searchParams.get("code")!,
      redirect_uri: REDIRECT_URI,
      client_id: "another-app",
      code_verifier: flow.verifier,
    });
    expect([other.status, other.json.error]).toEqual([401, "invalid_grant"]);
  });

  it("bad credentials re-render the hosted page with 401 and keep the transaction open", async () => {
    const pool = await createPool("badlogin");
    const user = await createUser(pool);
    const started = await startAuthorization(pool);
    const bad = await signInOnHostedPage(started.location, user.email, "not the password");
    expect(bad.status).toBe(401);
    expect(bad.text).toContain("Wrong e-mail address or password");
    const good = await signInOnHostedPage(started.location, user.email);
    expect(good.status).toBe(303);
  });
});

describe("identity issuer: password and refresh grants", () => {
  it("the password grant answers JSON and form requests; a bad password is 401 invalid_grant", async () => {
    const pool = await createPool("direct");
    const user = await createUser(pool);
    const form = await passwordGrant(pool, user.email);
    expect(form.status).toBe(200);
    expect(form.headers.get("cache-control")).toBe("no-store");
    expect(form.json).toMatchObject({ token_type: "bearer", expires_in: 900 });
    const json = await fetch(`${pool.issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "password", email: user.email, password: PASSWORD }),
    });
    expect(json.status).toBe(200);
    const bad = await post(`${pool.issuer}/token`, {
      grant_type: "password",
      email: user.email,
      password: "wrong password!",
    });
    expect([bad.status, bad.json.error]).toEqual([401, "invalid_grant"]);
    const unsupported = await post(`${pool.issuer}/token`, { grant_type: "client_credentials" });
    expect([unsupported.status, unsupported.json.error]).toEqual([400, "unsupported_grant_type"]);
  });

  it("serves a standard password-grant client: username, scope openid, and the UserInfo endpoint", async () => {
    const pool = await createPool("standard");
    const user = await createUser(pool);
    // What Authlib's password grant sends for a public client.
    const tokens = await post(`${pool.issuer}/token`, {
      grant_type: "password",
      username: user.email,
      password: PASSWORD,
      scope: "openid email",
      client_id: "cli",
    });
    expect(tokens.status).toBe(200);
    const jwks = createRemoteJWKSet(new URL(pool.as.jwks_uri!));
    const { payload } = await jwtVerify(tokens.json.id_token as string, jwks, {
      issuer: pool.issuer,
      audience: "cli",
      typ: "JWT",
    });
    expect(payload).toMatchObject({ sub: user.id, email: user.email });

    const byForm = await post(`${pool.issuer}/userinfo`, { access_token: tokens.json.access_token as string });
    expect([byForm.status, byForm.json]).toEqual([200, { sub: user.id, email: user.email, email_verified: false }]);
    const bad = await fetch(`${pool.issuer}/userinfo`, { headers: { authorization: "Bearer not.a.token" } });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token", error_description="/);
    const noToken = await fetch(`${pool.issuer}/userinfo`);
    expect([noToken.status, noToken.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);

    const conflicting = await post(`${pool.issuer}/token`, {
      grant_type: "password",
      username: user.email,
      email: "other@example.com",
      password: PASSWORD,
    });
    expect([conflicting.status, conflicting.json.error]).toEqual([400, "invalid_request"]);
  });

  it("the password grant can be switched off while the hosted login stays open", async () => {
    const pool = await createPool("nodirect");
    const user = await createUser(pool);
    await acme.client.identityAdmin.upsertConnection({
      path: { pool: "nodirect" },
      body: { kind: "local", configJson: JSON.stringify({ password_grant: false }), enabled: true },
    });
    const refused = await passwordGrant(pool, user.email);
    expect([refused.status, refused.json.error]).toEqual([403, "access_denied"]);
    const flow = await codeFlow(pool, user.email);
    expect(flow.callback.searchParams.get("code")).toBeTruthy();
  });

  it("reusing a rotated refresh token burns the family", async () => {
    const pool = await createPool("reuse");
    const user = await createUser(pool);
    const first = (await passwordGrant(pool, user.email)).json.refresh_token as string;
    const second = (await refresh(pool, first)).json.refresh_token as string;
    const third = (await refresh(pool, second)).json.refresh_token as string;
    const reused = await refresh(pool, first);
    expect([reused.status, reused.json.error]).toEqual([401, "invalid_grant"]);
    const burnt = await refresh(pool, third);
    expect([burnt.status, burnt.json.error]).toEqual([401, "invalid_grant"]);
  });

  it("a refresh token only refreshes for the client it was issued to", async () => {
    const pool = await createPool("client-bound");
    const user = await createUser(pool);
    const flow = await codeFlow(pool, user.email);
    const tokens = await oauth.processAuthorizationCodeResponse(pool.as, CLIENT, await exchange(pool, flow), {
      expectedNonce: flow.nonce,
      requireIdToken: true,
    });
    const other = await post(`${pool.issuer}/token`, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token!,
      client_id: "another-app",
    });
    expect([other.status, other.json.error]).toEqual([401, "invalid_grant"]);
    // The refused attempt used nothing up: the client the token belongs to refreshes it as usual.
    const own = await oauth.processRefreshTokenResponse(
      pool.as,
      CLIENT,
      await oauth.refreshTokenGrantRequest(pool.as, CLIENT, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(own.refresh_token).toBeTruthy();

    const direct = await post(`${pool.issuer}/token`, {
      grant_type: "password",
      email: user.email,
      password: PASSWORD,
      client_id: "cli",
    });
    const wrong = await post(`${pool.issuer}/token`, {
      grant_type: "refresh_token",
      refresh_token: direct.json.refresh_token as string,
      client_id: CLIENT.client_id,
    });
    expect([wrong.status, wrong.json.error]).toEqual([401, "invalid_grant"]);
    expect(
      (
        await post(`${pool.issuer}/token`, {
          grant_type: "refresh_token",
          refresh_token: direct.json.refresh_token as string,
          client_id: "cli",
        })
      ).status,
    ).toBe(200);
  });

  it("10 concurrent refreshes of one token all get the same successor, which then rotates", async () => {
    const pool = await createPool("concurrent");
    const user = await createUser(pool);
    const token = (await passwordGrant(pool, user.email)).json.refresh_token as string;
    const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(pool, token)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const successors = new Set(answers.map((a) => a.json.refresh_token));
    expect(successors.size).toBe(1);
    const next = await refresh(pool, [...successors][0] as string);
    expect(next.status).toBe(200);
  });

  it("logout revokes the session and is idempotent", async () => {
    const pool = await createPool("logout");
    const user = await createUser(pool);
    const token = (await passwordGrant(pool, user.email)).json.refresh_token as string;
    for (let i = 0; i < 2; i++) {
      const out = await fetch(`${pool.issuer}/logout`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ refresh_token: token }),
      });
      expect([out.status, await out.json()]).toEqual([200, {}]);
    }
    expect((await refresh(pool, token)).status).toBe(401);
  });
});

describe("identity issuer: documents stored before URLs were checked", () => {
  // The admin plane refuses such URLs now, so the test writes them into the database directly,
  // which it can only do while the server runs on PostgreSQL.
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "a redirect URI or logo URL that does not parse breaks no page and no /authorize",
    async () => {
      const pool = await createPool("stale-urls");
      const user = await createUser(pool);
      const broken = "http://localhost:99999/callback";
      const sql = postgres(server.databaseUrl!, { max: 1, onnotice: () => {} });
      try {
        await sql`update identity_pools set branding = ${sql.json({ logo_url: "https://x.example:99999/a.png" })},
        settings = ${sql.json({ redirect_uris: [REDIRECT_URI, broken] })} where name = ${pool.name}`;
      } finally {
        await sql.end();
      }
      // The issuer keeps a resolved pool for half a second: wait until it reads the new documents.
      const deadline = Date.now() + 10_000;
      let refused = await startAuthorization(pool, { redirect_uri: broken });
      while (refused.response.status === 302 && Date.now() < deadline)
        refused = await startAuthorization(pool, { redirect_uri: broken });
      expect([refused.response.status, refused.location]).toEqual([400, ""]);

      const flow = await codeFlow(pool, user.email);
      expect(flow.callback.searchParams.get("code")).toBeTruthy();
      for (const path of ["reset?token=t", "verify?token=t", "branding"]) {
        const answer = await fetch(`${pool.issuer}/${path}`);
        expect([answer.status, (await answer.text()).includes("99999")], path).toEqual([200, false]);
      }
    },
  );
});

describe("identity issuer: GET /user", () => {
  it("refuses a banned user (403), a deleted one (404) and another pool's token (401)", async () => {
    const pool = await createPool("me");
    const otherPool = await createPool("me-other");
    const banned = await createUser(pool);
    const deleted = await createUser(pool);
    const stranger = await createUser(otherPool);
    const tokenOf = async (p: TestPool, email: string) => (await passwordGrant(p, email)).json.access_token as string;
    const me = (token: string) => fetch(`${pool.issuer}/user`, { headers: { authorization: `Bearer ${token}` } });

    const bannedToken = await tokenOf(pool, banned.email);
    await acme.client.identityAdmin.setUserBanned({ path: { pool: "me", userId: banned.id }, body: { banned: true } });
    const asBanned = await me(bannedToken);
    expect([asBanned.status, await asBanned.json()]).toEqual([403, { error: "the user is banned" }]);

    const deletedToken = await tokenOf(pool, deleted.email);
    await acme.client.identityAdmin.deleteUser({ path: { pool: "me", userId: deleted.id } });
    expect((await me(deletedToken)).status).toBe(404);

    const foreign = await me(await tokenOf(otherPool, stranger.email));
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    expect((await fetch(`${pool.issuer}/user`)).status).toBe(401);
  });
});

describe("identity issuer: CORS and rate limits", () => {
  it("answers preflights only for the pool's listed origins, without credentials", async () => {
    const pool = await createPool("cors");
    const preflight = (origin: string) =>
      fetch(`${pool.issuer}/token`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
      });
    const allowed = await preflight("http://app.example");
    expect(allowed.status).toBe(204);
    expect(
      Object.fromEntries([...allowed.headers].filter(([name]) => name.startsWith("access-control-"))),
    ).toMatchObject({
      "access-control-allow-origin": "http://app.example",
      "access-control-allow-methods": "GET,POST,PUT,DELETE,OPTIONS",
      "access-control-allow-headers": "authorization,content-type",
      "access-control-max-age": "600",
    });
    expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
    const denied = await preflight("http://evil.example");
    expect(denied.status).toBe(403);
    expect(denied.headers.get("access-control-allow-origin")).toBeNull();

    const actual = await fetch(`${pool.issuer}/branding`, { headers: { origin: "http://app.example" } });
    expect(actual.headers.get("access-control-allow-origin")).toBe("http://app.example");
    const foreign = await fetch(`${pool.issuer}/branding`, { headers: { origin: "http://app.example:8080" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("counts each client address a trusted proxy names on its own", async () => {
    const pool = await createPool("proxied", {
      policies: { rate_limits: { login_ip: { requests: 2, window_seconds: 60 } } },
    });
    const attempt = async (forwardedFor: string) => {
      const email = `nobody-${randomBytes(4).toString("hex")}@example.com`;
      const answer = await fetch(`${pool.issuer}/token`, {
        method: "POST",
        headers: { "x-forwarded-for": forwardedFor },
        body: new URLSearchParams({ grant_type: "password", email, password: "wrong password!" }),
      });
      return answer.status;
    };
    // Each attempt names another e-mail address: only the address budget can run out.
    const first = [await attempt("203.0.113.1"), await attempt("203.0.113.1"), await attempt("203.0.113.1")];
    expect(first).toEqual([401, 401, 429]);
    expect(await attempt("203.0.113.2")).toBe(401);
    // What the client itself put left of the proxy's entry is not believed.
    expect(await attempt("198.51.100.7, 203.0.113.1")).toBe(429);
  });

  it("ten wrong passwords from one client address do not lock the owner out from another", async () => {
    const pool = await createPool("lockout");
    const user = await createUser(pool);
    const signIn = async (from: string, password: string) =>
      (
        await post(
          `${pool.issuer}/token`,
          { grant_type: "password", email: user.email, password },
          { "x-forwarded-for": from },
        )
      ).status;
    const guesses: number[] = [];
    for (let i = 0; i < 10; i++) guesses.push(await signIn("203.0.113.66", `wrong guess ${i}`));
    expect(guesses).toEqual(Array(10).fill(401));
    // The guessing client is stopped for this account, even with the right password...
    expect(await signIn("203.0.113.66", PASSWORD)).toBe(429);
    // ...while the owner, elsewhere, signs in.
    expect(await signIn("198.51.100.20", PASSWORD)).toBe(200);
  });

  it("answers 429 with Retry-After once an address's password budget is spent", async () => {
    const pool = await createPool("limited", {
      policies: { rate_limits: { login: { requests: 3, window_seconds: 60 } } },
    });
    const user = await createUser(pool);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await post(`${pool.issuer}/token`, {
        grant_type: "password",
        email: user.email,
        password: "wrong password!",
      });
      statuses.push(last.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(last!.json.error).toBe("too_many_requests");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(last!.headers.get("retry-after"))).toBeLessThanOrEqual(60);
  });
});

describe("identity issuer: account flows", () => {
  it("signup mails a verification link; the link's page confirms the address", async () => {
    const pool = await createPool("signup");
    const email = `new-${randomBytes(4).toString("hex")}@example.com`;
    const signup = await fetch(`${pool.issuer}/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const body = (await signup.json()) as { user: { email_verified: boolean }; session?: { access_token: string } };
    expect(signup.status).toBe(200);
    expect(body.user.email_verified).toBe(false);
    expect(body.session?.access_token).toBeTruthy();
    const taken = await fetch(`${pool.issuer}/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(taken.status).toBe(409);

    const link = await mailedLink(pool, email, "verify");
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const token = new URL(link).searchParams.get("token")!;
    const confirmed = await post(`${pool.issuer}/verify`, { token });
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain("confirmed");
  });

  it("signup is 403 when the pool disables it", async () => {
    const pool = await createPool("closed", { settings: { signup_enabled: false } });
    const signup = await fetch(`${pool.issuer}/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "x@example.com", password: PASSWORD }),
    });
    expect(signup.status).toBe(403);
  });

  it("recover answers the same for any address; the reset link sets a password once and ends the sessions", async () => {
    const pool = await createPool("recover");
    const user = await createUser(pool);
    const session = (await passwordGrant(pool, user.email)).json.refresh_token as string;
    const recover = (email: string) =>
      fetch(`${pool.issuer}/recover`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email }),
      });
    const known = await recover(user.email);
    const unknown = await recover("nobody@example.com");
    expect([known.status, await known.text()]).toEqual([unknown.status, await unknown.text()]);

    const link = await mailedLink(pool, user.email, "reset");
    const token = new URL(link).searchParams.get("token")!;
    const reset = () =>
      fetch(`${pool.issuer}/reset`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token, password: "a brand new password" }),
      });
    expect((await reset()).status).toBe(200);
    expect((await reset()).status).toBe(401);
    expect((await refresh(pool, session)).status).toBe(401);
    const signIn = await post(`${pool.issuer}/token`, {
      grant_type: "password",
      email: user.email,
      password: "a brand new password",
    });
    expect(signIn.status).toBe(200);
  });
});

describe("identity issuer: recover timing", () => {
  it("takes as long for a registered address as for an unknown one", async () => {
    // Far above what the test sends: it measures the endpoint, not the limiter's refusals.
    const plenty = { requests: 100_000, window_seconds: 3600 };
    const pool = await createPool("recover-timing", {
      policies: { rate_limits: { recover: plenty, recover_ip: plenty, recover_email: plenty } },
    });
    const user = await createUser(pool);
    const recover = async (email: string) => {
      const began = performance.now();
      const answer = await fetch(`${pool.issuer}/recover`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email }),
      });
      await answer.arrayBuffer();
      if (answer.status !== 200) throw new Error(`recover answered ${answer.status}`);
      return performance.now() - began;
    };
    // One unknown address throughout, like the registered one: a first request for any address
    // costs a little more (its rate-limit counter is created), registered or not.
    const unknown = "nobody@example.com";
    for (let i = 0; i < 20; i++) await recover(i % 2 === 0 ? user.email : unknown);
    // A sign test over interleaved pairs (the order alternates, so drift favours neither side): if
    // the two took the same time, the registered address would be the slower one about half the
    // time. 400 pairs put one standard deviation at 10 pairs; 65% is six of them away.
    const pairs = 400;
    let registeredSlower = 0;
    for (let i = 0; i < pairs; i++) {
      let registered: number;
      let stranger: number;
      if (i % 2 === 0) {
        registered = await recover(user.email);
        stranger = await recover(unknown);
      } else {
        stranger = await recover(unknown);
        registered = await recover(user.email);
      }
      if (registered > stranger) registeredSlower++;
    }
    expect(registeredSlower).toBeLessThan(pairs * 0.65);
    expect(registeredSlower).toBeGreaterThan(pairs * 0.35);
  });
});

/** The link of the newest e-mail to `email`, from the log line the server writes without SMTP. */
async function mailedLink(pool: TestPool, email: string, page: "verify" | "reset"): Promise<string> {
  const prefix = `${pool.issuer}/${page}?token=`;
  for (let attempt = 0; attempt < 50; attempt++) {
    const line = readServerLog()
      .reverse()
      .find((entry) => entry.includes(email) && entry.includes(prefix));
    if (line) return (JSON.parse(line) as { link: string }).link;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no ${page} mail to ${email} in the server log`);
}

function readServerLog(): string[] {
  return [...server.logs];
}
