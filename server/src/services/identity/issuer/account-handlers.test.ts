import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMAIL_TOKEN_TTL_MS } from "../email-tokens.js";
import { engineName } from "../identity-test-fixture.js";
import { createRecoveryComposer } from "./recovery-composer.js";
import { openIssuerTestPlane, TEST_PASSWORD, type IssuerTestPlane, type TestIssuerPool } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

/** Issues a link token the way the flows do, for the tests that need one in hand. */
async function linkToken(pool: TestIssuerPool, userId: string, purpose: "verify" | "reset") {
  return plane.services.emailTokens.issue(pool.context().ref, userId, purpose);
}

describe(`issuer account flows (${engineName})`, () => {
  it("signup returns a session, or none when a verified address is required; 409 taken, 403 closed, 400 short password", async () => {
    const open = await plane.pool();
    const signup = (pool: TestIssuerPool, email: string, password = TEST_PASSWORD) =>
      plane.request("POST", `${pool.issuer}/signup`, { json: { email, password } });
    const created = await signup(open, "ann@example.com");
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      user: { email: "ann@example.com", email_verified: false },
      session: { token_type: "bearer", expires_in: 900 },
    });
    expect((await signup(open, "ANN@example.com")).status).toBe(409);
    const short = await signup(open, "bob@example.com", "short");
    expect([short.status, short.json.error]).toEqual([400, "password must be at least 8 characters"]);

    const strict = await plane.pool({ settings: { email_verification_required: true } });
    const pending = await signup(strict, "cy@example.com");
    expect(pending.status).toBe(200);
    expect(pending.json.session).toBeUndefined();
    const closed = await plane.pool({ settings: { signup_enabled: false } });
    expect((await signup(closed, "dee@example.com")).status).toBe(403);
  });

  it("recover answers the same for a registered and an unknown address, JSON or form", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    for (const options of [{ json: {} as Record<string, string> }, { form: {} as Record<string, string> }]) {
      const ask = (email: string) =>
        plane.request("POST", `${pool.issuer}/recover`, "json" in options ? { json: { email } } : { form: { email } });
      const known = await ask(user.email);
      const unknown = await ask("nobody@example.com");
      expect(known.status).toBe(200);
      expect([known.status, known.text]).toEqual([unknown.status, unknown.text]);
    }
  });

  it("recover queues the request; the delivery loop's composer mails the owner, waits out a migration lock, and drops a deleted pool's", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const compose = createRecoveryComposer(plane.deps);
    expect(
      (await plane.request("POST", `${pool.issuer}/recover`, { json: { email: user.email.toUpperCase() } })).status,
    ).toBe(200);
    const ref = pool.context().ref;

    plane.locked.add(pool.record.id);
    await expect(compose(ref, { to: user.email.toUpperCase(), purpose: "reset" })).rejects.toThrow(
      /locked for a migration/,
    );
    plane.locked.delete(pool.record.id);
    const write = await compose(ref, { to: user.email.toUpperCase(), purpose: "reset" });
    const mail = await plane.services.db.transaction(async (tx) => write!(tx));
    expect(mail).toMatchObject({
      to: user.email,
      purpose: "reset",
      link: expect.stringContaining(`${pool.issuer}/reset?token=`),
    });
    const token = new URL(mail.link).searchParams.get("token")!;
    expect(
      (await plane.request("POST", `${pool.issuer}/reset`, { json: { token, password: "a new long password" } }))
        .status,
    ).toBe(200);

    expect(await compose(ref, { to: "nobody@example.com", purpose: "reset" })).toBeUndefined();
    await plane.fixture.pools.delete(pool.record.orgId, pool.record.name);
    plane.services.poolCache.forget(pool.orgName, pool.record.name);
    expect(await compose(ref, { to: user.email, purpose: "reset" })).toBeUndefined();
  });

  it("reset works once within 30 minutes, verifies the address and ends every session", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const session = (
      await plane.request("POST", `${pool.issuer}/token`, {
        form: { grant_type: "password", email: user.email, password: TEST_PASSWORD },
      })
    ).json.refresh_token as string;
    const token = await linkToken(pool, user.id, "reset");
    const page = await plane.request("GET", `${pool.issuer}/reset?token=${encodeURIComponent(token)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('action="reset"');
    const tooShort = await plane.request("POST", `${pool.issuer}/reset`, { form: { token, password: "short" } });
    expect(tooShort.status).toBe(400);
    expect(tooShort.text).toContain("Choose a new password");
    const reset = () =>
      plane.request("POST", `${pool.issuer}/reset`, { json: { token, password: "a new long password" } });
    expect((await reset()).status).toBe(200);
    expect((await reset()).status).toBe(401);
    expect((await pool.context().users.get(user.id))?.emailVerified).toBe(true);
    expect(
      (
        await plane.request("POST", `${pool.issuer}/token`, {
          form: { grant_type: "refresh_token", refresh_token: session },
        })
      ).status,
    ).toBe(401);

    const late = await linkToken(pool, user.id, "reset");
    plane.advance(EMAIL_TOKEN_TTL_MS.reset + 1);
    expect(
      (
        await plane.request("POST", `${pool.issuer}/reset`, {
          json: { token: late, password: "another long password" },
        })
      ).status,
    ).toBe(401);
  });

  it("verify marks the address verified from the page's form; a bad token is 401", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const token = await linkToken(pool, user.id, "verify");
    const page = await plane.request("GET", `${pool.issuer}/verify?token=${encodeURIComponent(token)}`);
    expect(page.text).toContain('action="verify"');
    const confirmed = await plane.request("POST", `${pool.issuer}/verify`, { form: { token } });
    expect([confirmed.status, confirmed.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    expect((await pool.context().users.get(user.id))?.emailVerified).toBe(true);
    const bad = await plane.request("POST", `${pool.issuer}/verify`, { json: { token: "nope" } });
    expect([bad.status, bad.json.error]).toEqual([401, "the link is invalid, already used or expired"]);
  });
});
