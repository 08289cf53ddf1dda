import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { openIssuerTestPlane, TEST_PASSWORD, type IssuerTestPlane, type TestIssuerPool } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

async function signIn(pool: TestIssuerPool, email: string) {
  return (
    await plane.request("POST", `${pool.issuer}/token`, {
      form: { grant_type: "password", email, password: TEST_PASSWORD },
    })
  ).json as { access_token: string; refresh_token: string };
}
const me = (pool: TestIssuerPool, token: string) =>
  plane.request("GET", `${pool.issuer}/user`, { headers: { authorization: `Bearer ${token}` } });

describe(`issuer GET /user and logout (${engineName})`, () => {
  it("answers the token's claims and the user as stored now", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const { access_token } = await signIn(pool, user.email);
    await pool.context().users.update(user.id, { emailVerified: true });
    const answer = await me(pool, access_token);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({
      claims: { sub: user.id, email_verified: false },
      user: { id: user.id, email: user.email, email_verified: true, app_roles: [] },
    });
    expect(answer.json.user as object).not.toHaveProperty("banned");
  });

  it("401 for a missing, malformed, expired or foreign token; 403 banned; 404 deleted", async () => {
    const pool = await plane.pool();
    const other = await plane.pool();
    const user = await plane.user(pool);
    const stranger = await plane.user(other);
    expect((await plane.request("GET", `${pool.issuer}/user`)).status).toBe(401);
    expect((await me(pool, "not-a-jwt")).status).toBe(401);
    expect((await me(pool, (await signIn(other, stranger.email)).access_token)).status).toBe(401);
    const { access_token } = await signIn(pool, user.email);
    await pool.context().users.setBanned(user.id, true);
    expect((await me(pool, access_token)).status).toBe(403);
    await pool.context().users.setBanned(user.id, false);
    await pool.context().users.delete(user.id);
    expect((await me(pool, access_token)).status).toBe(404);
    plane.advance(901_000);
    const expired = await me(pool, access_token);
    expect([expired.status, expired.json.error, expired.headers.get("www-authenticate")]).toEqual([
      401,
      "the access token has expired",
      'Bearer error="invalid_token"',
    ]);
  });

  it("logout ends the session family and answers 200 for any token", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const { refresh_token } = await signIn(pool, user.email);
    for (const value of [refresh_token, refresh_token, "unknown"]) {
      const out = await plane.request("POST", `${pool.issuer}/logout`, { json: { refresh_token: value } });
      expect([out.status, out.json]).toEqual([200, {}]);
    }
    expect(
      (await plane.request("POST", `${pool.issuer}/token`, { form: { grant_type: "refresh_token", refresh_token } }))
        .status,
    ).toBe(401);
  });
});
