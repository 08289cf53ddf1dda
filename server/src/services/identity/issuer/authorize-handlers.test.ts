import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { LOGIN_TRANSACTION_TTL_MS } from "../login-transactions.js";
import { authorizeUrl, beginLogin, codeFor, pkcePair, redeem, submitLogin } from "./issuer-test-flow.js";
import { openIssuerTestPlane, TEST_REDIRECT_URI, type IssuerTestPlane } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

describe(`issuer authorize and hosted login (${engineName})`, () => {
  it("never redirects to a missing or unlisted redirect_uri", async () => {
    const pool = await plane.pool();
    for (const redirect of ["https://app.example/callback/other", "https://evil.example/callback"]) {
      const answer = await plane.request(
        "GET",
        authorizeUrl(pool, { code_challenge: pkcePair().challenge, redirect_uri: redirect }),
      );
      expect([answer.status, answer.headers.get("location")]).toEqual([400, null]);
      expect(answer.text).toContain("redirect_uri is not one of this pool");
    }
    const url = new URL(authorizeUrl(pool, { code_challenge: pkcePair().challenge }));
    url.searchParams.delete("redirect_uri");
    expect((await plane.request("GET", url.toString())).status).toBe(400);
  });

  it("a URL stored before writes were checked never breaks /authorize or a page", async () => {
    const broken = "https://app.example:99999/callback";
    const pool = await plane.pool({
      settings: { redirect_uris: [TEST_REDIRECT_URI, broken] },
      branding: { logo_url: "https://x.example:99999/a.png", favicon_url: "https://cdn.example:70000/icon.ico" },
    });
    const user = await plane.user(pool);
    // A redirect URI that does not parse is not registered: an error page, never a redirect.
    const refused = await plane.request(
      "GET",
      authorizeUrl(pool, { code_challenge: pkcePair().challenge, redirect_uri: broken }),
    );
    expect([refused.status, refused.headers.get("location")]).toEqual([400, null]);
    // The listed one works, and the pages leave the unusable logo and icon out.
    const handle = await beginLogin(plane, pool, { code_challenge: pkcePair().challenge });
    const page = await plane.request("GET", `${pool.issuer}/login?transaction=${handle}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("99999");
    expect(page.headers.get("content-security-policy")).toContain("img-src 'none'");
    for (const path of ["reset?token=t", "verify?token=t", "branding"]) {
      const answer = await plane.request("GET", `${pool.issuer}/${path}`);
      expect([answer.status, answer.text.includes("99999")], path).toEqual([200, false]);
    }
    expect((await plane.request("POST", `${pool.issuer}/recover`, { form: { email: user.email } })).status).toBe(200);
    expect((await submitLogin(plane, pool, handle, user.email)).status).toBe(303);

    // A login begun from such a URI has nowhere to go back to: the page says the link is not valid.
    const request = {
      clientId: "web",
      redirectUri: broken,
      state: "s",
      codeChallenge: pkcePair().challenge,
      scope: "",
      nonce: "",
      tenant: "",
    };
    const stranded = await plane.deps.transactions.begin(pool.context().ref, request);
    expect((await plane.request("GET", `${pool.issuer}/login?transaction=${stranded}`)).status).toBe(400);
    expect((await submitLogin(plane, pool, stranded, user.email)).status).toBe(400);
  });

  it("redirects other errors back with the RFC 6749 code, state and iss", async () => {
    const pool = await plane.pool();
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge: "short" }, "invalid_request"],
      [{ code_challenge: pkcePair().challenge, code_challenge_method: "plain" }, "invalid_request"],
      [{ code_challenge: "x".repeat(129) }, "invalid_request"],
      [{ code_challenge: pkcePair().challenge, response_type: "token" }, "unsupported_response_type"],
      [{ code_challenge: pkcePair().challenge, client_id: "" }, "invalid_request"],
      [{ code_challenge: pkcePair().challenge, tenant: "no-such-tenant" }, "invalid_request"],
    ];
    for (const [params, error] of cases) {
      const answer = await plane.request("GET", authorizeUrl(pool, params));
      expect(answer.status).toBe(302);
      const back = new URL(answer.headers.get("location")!);
      expect(`${back.origin}${back.pathname}`).toBe(TEST_REDIRECT_URI);
      expect([back.searchParams.get("error"), back.searchParams.get("state"), back.searchParams.get("iss")]).toEqual([
        error,
        "st-1",
        pool.issuer,
      ]);
    }
  });

  it("an expired login transaction goes back with access_denied / login_session_expired", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const handle = await beginLogin(plane, pool, { code_challenge: pkcePair().challenge });
    plane.advance(LOGIN_TRANSACTION_TTL_MS + 1000);
    for (const answer of [
      await plane.request("GET", `${pool.issuer}/login?transaction=${handle}`),
      await submitLogin(plane, pool, handle, user.email),
    ]) {
      expect([302, 303]).toContain(answer.status);
      const back = new URL(answer.headers.get("location")!);
      expect([
        back.searchParams.get("error"),
        back.searchParams.get("error_description"),
        back.searchParams.get("state"),
      ]).toEqual(["access_denied", "login_session_expired", "st-1"]);
    }
  });

  it("the login page is branded, escaped and locked down; a finished transaction cannot be reused", async () => {
    const pool = await plane.pool({
      displayName: `<script>alert("x")</script>`,
      branding: { primary_color: "#ff0000", logo_url: "https://cdn.example/logo.png" },
    });
    const user = await plane.user(pool);
    const handle = await beginLogin(plane, pool, { code_challenge: pkcePair().challenge });
    const page = await plane.request("GET", `${pool.issuer}/login?transaction=${handle}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("<script>");
    expect(page.text).toContain("&#60;script&#62;");
    expect(page.text).toContain("#ff0000");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://app.example");
    expect(csp).toContain("img-src https://cdn.example");
    expect(csp).not.toContain("script-src");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");

    expect((await submitLogin(plane, pool, handle, user.email)).status).toBe(303);
    expect((await submitLogin(plane, pool, handle, user.email)).status).toBe(400);
    expect((await plane.request("GET", `${pool.issuer}/login?transaction=${handle}`)).status).toBe(400);
  });

  it("a banned or unverified (where required) user stays on the page with 403", async () => {
    const pool = await plane.pool({ settings: { email_verification_required: true } });
    const unverified = await plane.user(pool);
    const handle = await beginLogin(plane, pool, { code_challenge: pkcePair().challenge });
    const answer = await submitLogin(plane, pool, handle, unverified.email);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain("Confirm your e-mail address first");
  });

  it("pins the tenant: a member gets tokens for that tenant only, a non-member goes back with access_denied", async () => {
    const pool = await plane.pool();
    const tenants = pool.context().tenants;
    await tenants.create({ slug: "red" });
    await tenants.create({ slug: "blue" });
    const member = await plane.user(pool);
    const outsider = await plane.user(pool);
    await tenants.setMember("red", member.id, []);
    await tenants.setMember("blue", member.id, []);

    const grant = await codeFor(plane, pool, member.email, { tenant: "red" });
    const tokens = await redeem(plane, pool, grant);
    expect(tokens.status).toBe(200);
    const claims = decodeJwt(tokens.json.access_token as string);
    expect([claims.tenant, Object.keys(claims.tenants as object)]).toEqual(["red", ["red"]]);

    const handle = await beginLogin(plane, pool, { code_challenge: pkcePair().challenge, tenant: "red" });
    const refused = await submitLogin(plane, pool, handle, outsider.email);
    expect(refused.status).toBe(303);
    expect(new URL(refused.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("issues an ID token with the client as audience and the nonce only for scope openid", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const withOpenid = await redeem(plane, pool, await codeFor(plane, pool, user.email, { nonce: "n-123" }));
    expect(decodeJwt(withOpenid.json.id_token as string)).toMatchObject({
      aud: "web",
      nonce: "n-123",
      sub: user.id,
      iss: pool.issuer,
    });
    const without = await redeem(plane, pool, await codeFor(plane, pool, user.email, { scope: "profile" }));
    expect(without.status).toBe(200);
    expect(without.json.id_token).toBeUndefined();
  });
});
