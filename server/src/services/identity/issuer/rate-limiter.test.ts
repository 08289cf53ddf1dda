import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "../identity-test-fixture.js";
import { budgetOf, createRateLimiter, DEFAULT_BUDGETS } from "./rate-limiter.js";

let fixture: IdentityTestFixture;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
});
afterAll(() => fixture.close());

describe(`issuer rate limiter (${engineName})`, () => {
  it("counts per address and per e-mail in fixed windows shared by every limiter on the database", async () => {
    const { ref } = await fixture.newPool();
    let clock = 1_800_000_000_000;
    const now = () => clock;
    // Two limiters stand for two server processes on one database.
    const first = createRateLimiter(fixture.database.db, { now });
    const second = createRateLimiter(fixture.database.db, { now });
    const budget = { requests: 2, windowSeconds: 60 };
    expect(await first.hit(ref, "login", budget, { ip: "10.0.0.1", email: "Ann@example.com" })).toBeUndefined();
    expect(await second.hit(ref, "login", budget, { ip: "10.0.0.2", email: "ann@example.com" })).toBeUndefined();
    // The third attempt on the address is over budget, from whichever client address.
    const over = await first.hit(ref, "login", budget, { ip: "10.0.0.3", email: "ann@example.com " });
    expect(over?.retryAfterSeconds).toBeGreaterThan(0);
    expect(over!.retryAfterSeconds).toBeLessThanOrEqual(60);
    // Another address from a fresh client is not affected; the next window starts afresh.
    expect(await second.hit(ref, "login", budget, { ip: "10.0.0.4", email: "bob@example.com" })).toBeUndefined();
    clock += 60_000;
    expect(await first.hit(ref, "login", budget, { ip: "10.0.0.3", email: "ann@example.com" })).toBeUndefined();
  });

  it("counts a large budget in batches, overshooting by at most a batch per process", async () => {
    const { ref } = await fixture.newPool();
    const clock = 1_800_000_000_000;
    const limiters = [createRateLimiter(fixture.database.db, { now: () => clock }), createRateLimiter(fixture.database.db, { now: () => clock })];
    const budget = { requests: 1000, windowSeconds: 60 };
    let allowed = 0;
    for (let i = 0; i < 1100; i++) {
      if (!(await limiters[i % 2]!.hit(ref, "token", budget, { ip: "10.0.0.9" }))) allowed++;
    }
    expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * 10);
    expect(allowed).toBeLessThanOrEqual(1000 + 2 * 10);
  });

  it("reads budgets from the pool's policies, falling back to the defaults for malformed entries", () => {
    expect(budgetOf({}, "token")).toEqual(DEFAULT_BUDGETS.token);
    expect(budgetOf({ rate_limits: { token: { requests: 5, window_seconds: 10 } } }, "token")).toEqual({ requests: 5, windowSeconds: 10 });
    expect(budgetOf({ rate_limits: { token: { requests: 0, window_seconds: 10 } } }, "token")).toEqual(DEFAULT_BUDGETS.token);
  });
});
