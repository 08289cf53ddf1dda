import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { openIssuerTestPlane, TEST_PASSWORD, type IssuerTestPlane, type TestIssuerPool } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

async function accessTokenOf(pool: TestIssuerPool, email: string): Promise<string> {
  return (
    await plane.request("POST", `${pool.issuer}/token`, {
      form: { grant_type: "password", email, password: TEST_PASSWORD },
    })
  ).json.access_token as string;
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe(`issuer UserInfo endpoint (${engineName})`, () => {
  it("answers the user's standard claims as they are now, by GET or POST, header or form", async () => {
    const pool = await plane.pool();
    const user = await plane.user(pool);
    const token = await accessTokenOf(pool, user.email);
    await pool.context().users.update(user.id, { emailVerified: true });
    const expected = { sub: user.id, email: user.email, email_verified: true };
    const byGet = await plane.request("GET", `${pool.issuer}/userinfo`, { headers: bearer(token) });
    expect([byGet.status, byGet.json, byGet.headers.get("cache-control")]).toEqual([200, expected, "no-store"]);
    expect((await plane.request("POST", `${pool.issuer}/userinfo`, { headers: bearer(token) })).json).toEqual(expected);
    expect((await plane.request("POST", `${pool.issuer}/userinfo`, { form: { access_token: token } })).json).toEqual(
      expected,
    );
    const twice = await plane.request("POST", `${pool.issuer}/userinfo`, {
      form: { access_token: token },
      headers: bearer(token),
    });
    expect([twice.status, twice.json.error]).toEqual([400, "invalid_request"]);
  });

  it("answers 401 with an RFC 6750 challenge: bare without a token, invalid_token for a bad one or a gone user", async () => {
    const pool = await plane.pool();
    const other = await plane.pool();
    const banned = await plane.user(pool);
    const deleted = await plane.user(pool);
    const stranger = await plane.user(other);
    const userInfo = (headers: Record<string, string> = {}) =>
      plane.request("GET", `${pool.issuer}/userinfo`, { headers });

    const none = await userInfo();
    expect([none.status, none.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);
    expect((await userInfo({ authorization: "Basic dXNlcjpwYXNz" })).headers.get("www-authenticate")).toBe("Bearer");

    const foreign = await userInfo(bearer(await accessTokenOf(other, stranger.email)));
    expect([foreign.status, foreign.json.error]).toEqual([401, "invalid_token"]);
    expect(foreign.headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", error_description="the token was not signed by a key of this pool"',
    );

    const bannedToken = await accessTokenOf(pool, banned.email);
    await pool.context().users.setBanned(banned.id, true);
    expect((await userInfo(bearer(bannedToken))).headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", error_description="the token\'s user is banned"',
    );
    const deletedToken = await accessTokenOf(pool, deleted.email);
    await pool.context().users.delete(deleted.id, { hard: false });
    expect((await userInfo(bearer(deletedToken))).json).toEqual({
      error: "invalid_token",
      error_description: "the token's user no longer exists",
    });

    plane.advance(16 * 60 * 1000);
    const expired = await userInfo(bearer(deletedToken));
    expect([expired.status, expired.json.error_description]).toEqual([401, "the access token has expired"]);
  });
});
