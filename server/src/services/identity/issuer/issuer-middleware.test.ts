import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { openIssuerTestPlane, TEST_PASSWORD, type IssuerTestPlane } from "./issuer-test-plane.js";

let plane: IssuerTestPlane;
beforeAll(async () => {
  plane = await openIssuerTestPlane();
});
afterAll(() => plane.close());

describe(`issuer middleware: CORS, rate limits, migration lock (${engineName})`, () => {
  it("allows exactly the pool's listed origins, with the specified headers and no credentials", async () => {
    const pool = await plane.pool({
      policies: { cors_allowed_origins: ["https://app.example", "http://localhost:3000"] },
    });
    const preflight = (origin: string) =>
      plane.request("OPTIONS", `${pool.issuer}/token`, {
        headers: { origin, "access-control-request-method": "POST" },
      });
    const allowed = await preflight("http://localhost:3000");
    expect(allowed.status).toBe(204);
    expect([
      allowed.headers.get("access-control-allow-origin"),
      allowed.headers.get("access-control-allow-methods"),
      allowed.headers.get("access-control-allow-headers"),
      allowed.headers.get("access-control-max-age"),
      allowed.headers.get("access-control-allow-credentials"),
    ]).toEqual(["http://localhost:3000", "GET,POST,PUT,DELETE,OPTIONS", "authorization,content-type", "600", null]);
    for (const origin of ["http://localhost:3001", "https://app.example.evil", "http://app.example", "null"]) {
      expect((await preflight(origin)).status).toBe(403);
    }
    // Another pool does not inherit the list.
    const other = await plane.pool({ policies: { cors_allowed_origins: [] } });
    expect(
      (
        await plane.request("OPTIONS", `${other.issuer}/token`, {
          headers: { origin: "https://app.example", "access-control-request-method": "POST" },
        })
      ).status,
    ).toBe(403);
  });

  it("answers 429 with Retry-After in each operation's shape: OAuth JSON, {error} and a page", async () => {
    const pool = await plane.pool({
      policies: {
        rate_limits: { token: { requests: 1, window_seconds: 30 }, recover_ip: { requests: 1, window_seconds: 30 } },
      },
    });
    const token = () =>
      plane.request("POST", `${pool.issuer}/token`, { form: { grant_type: "refresh_token", refresh_token: "x" } });
    expect((await token()).status).toBe(401);
    const limited = await token();
    expect([limited.status, limited.json.error]).toEqual([429, "too_many_requests"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);

    expect((await plane.request("POST", `${pool.issuer}/recover`, { json: { email: "a@example.com" } })).status).toBe(
      200,
    );
    const json = await plane.request("POST", `${pool.issuer}/recover`, { json: { email: "b@example.com" } });
    expect([json.status, json.json.error]).toEqual([429, "too many requests; retry later"]);
    const page = await plane.request("POST", `${pool.issuer}/recover`, { form: { email: "c@example.com" } });
    expect([page.status, page.headers.get("content-type")]).toEqual([429, "text/html; charset=utf-8"]);
    expect(page.headers.get("retry-after")).not.toBeNull();
  });

  it("throttles password guessing per address and client, so guessing from one client never locks the owner out", async () => {
    const budget = (requests: number) => ({ requests, window_seconds: 300 });
    const pool = await plane.pool({
      policies: { rate_limits: { login: budget(2), login_email: budget(5), login_ip: budget(3) } },
    });
    const user = await plane.user(pool);
    const signIn = async (from: string, password: string, email = user.email) =>
      (
        await plane.request("POST", `${pool.issuer}/token`, {
          form: { grant_type: "password", email, password },
          headers: { "x-forwarded-for": from },
        })
      ).status;

    expect([await signIn("203.0.113.1", "wrong guess 1"), await signIn("203.0.113.1", "wrong guess 2")]).toEqual([
      401, 401,
    ]);
    // That client is stopped for this address, even with the right password...
    for (let i = 0; i < 8; i++) expect(await signIn("203.0.113.1", TEST_PASSWORD)).toBe(429);
    // ...and the refusals did not spend the address's budget shared by all clients: the owner signs in.
    expect(await signIn("198.51.100.2", TEST_PASSWORD)).toBe(200);

    // Guessing spread over clients is stopped by that shared budget (2 + 1 + 2 counted so far, then over).
    expect([await signIn("203.0.113.3", "wrong guess 3"), await signIn("203.0.113.3", "wrong guess 4")]).toEqual([
      401, 401,
    ]);
    expect(await signIn("203.0.113.4", "wrong guess 5")).toBe(429);

    // One client trying many addresses is stopped by its own budget.
    const sprayer = (i: number) => signIn("203.0.113.9", "wrong guess", `nobody-${i}@example.com`);
    expect([await sprayer(1), await sprayer(2), await sprayer(3), await sprayer(4)]).toEqual([401, 401, 401, 429]);
  });

  it("throttles recovery mails per address and client first, so asking from one client never uses up the owner's", async () => {
    const budget = (requests: number) => ({ requests, window_seconds: 3600 });
    const pool = await plane.pool({
      policies: { rate_limits: { recover: budget(2), recover_email: budget(3), recover_ip: budget(10) } },
    });
    const recover = async (from: string) =>
      (
        await plane.request("POST", `${pool.issuer}/recover`, {
          json: { email: "owner@example.com" },
          headers: { "x-forwarded-for": from },
        })
      ).status;
    expect([await recover("203.0.113.1"), await recover("203.0.113.1")]).toEqual([200, 200]);
    for (let i = 0; i < 5; i++) expect(await recover("203.0.113.1")).toBe(429);
    // The refusals did not spend the address's budget: the owner asks from elsewhere.
    expect(await recover("198.51.100.2")).toBe(200);
    expect(await recover("198.51.100.3")).toBe(429);
  });

  it("counts a password grant that names its user as username like one that says email", async () => {
    const pool = await plane.pool({ policies: { rate_limits: { login: { requests: 1, window_seconds: 300 } } } });
    const user = await plane.user(pool);
    const grant = async (named: Record<string, string>, password: string) =>
      (
        await plane.request("POST", `${pool.issuer}/token`, {
          form: { grant_type: "password", ...named, password },
          headers: { "x-forwarded-for": "203.0.113.7" },
        })
      ).status;
    expect(await grant({ username: user.email }, "wrong guess")).toBe(401);
    expect(await grant({ email: user.email }, TEST_PASSWORD)).toBe(429);
  });

  it("answers 503 with Retry-After on user operations while locked, and keeps discovery and pages up", async () => {
    const pool = await plane.pool();
    plane.locked.add(pool.record.id);
    try {
      const signup = await plane.request("POST", `${pool.issuer}/signup`, {
        json: { email: "a@example.com", password: "long enough password" },
      });
      expect([signup.status, signup.headers.get("retry-after")]).toEqual([503, "2"]);
      const authorize = await plane.request("GET", `${pool.issuer}/authorize?response_type=code`);
      expect([authorize.status, authorize.headers.get("content-type")]).toEqual([503, "text/html; charset=utf-8"]);
      expect((await plane.request("GET", `${pool.issuer}/.well-known/jwks.json`)).status).toBe(200);
      expect((await plane.request("GET", `${pool.issuer}/verify?token=abc`)).status).toBe(200);
    } finally {
      plane.locked.delete(pool.record.id);
    }
  });
});
