import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "../identity-test-fixture.js";
import { budgetOf, createRateLimiter, DEFAULT_BUDGETS, type RateBudget, type RateSubject } from "./rate-limiter.js";

let fixture: IdentityTestFixture;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
});
afterAll(() => fixture.close());

const login = (budget: RateBudget, subject: RateSubject) => [{ name: "login" as const, budget, subject }];

describe(`issuer rate limiter (${engineName})`, () => {
  it("counts per subject in fixed windows shared by every limiter on the database", async () => {
    const { ref } = await fixture.newPool();
    let clock = 1_800_000_000_000;
    const now = () => clock;
    // Two limiters stand for two server processes on one database.
    const first = createRateLimiter(fixture.database.db, { now });
    const second = createRateLimiter(fixture.database.db, { now });
    const budget = { requests: 2, windowSeconds: 60 };
    expect(await first.hit(ref, login(budget, { email: "Ann@example.com" }))).toBeUndefined();
    expect(await second.hit(ref, login(budget, { email: "ann@example.com" }))).toBeUndefined();
    // The third count of the address (compared trimmed and case-insensitively) is over budget.
    const over = await first.hit(ref, login(budget, { email: "ann@example.com " }));
    expect(over?.retryAfterSeconds).toBeGreaterThan(0);
    expect(over!.retryAfterSeconds).toBeLessThanOrEqual(60);
    // Another e-mail address is not affected; the next window starts afresh.
    expect(await second.hit(ref, login(budget, { email: "bob@example.com" }))).toBeUndefined();
    clock += 60_000;
    expect(await first.hit(ref, login(budget, { email: "ann@example.com" }))).toBeUndefined();
  });

  it("counts an e-mail address at one client address apart from the e-mail address alone and the client address alone", async () => {
    const { ref } = await fixture.newPool();
    const limiter = createRateLimiter(fixture.database.db, { now: () => 1_800_000_000_000 });
    const budget = { requests: 1, windowSeconds: 60 };
    expect(await limiter.hit(ref, login(budget, { ip: "10.0.0.1", email: "ann@example.com" }))).toBeUndefined();
    expect(await limiter.hit(ref, login(budget, { ip: "10.0.0.1", email: "ann@example.com" }))).toBeDefined();
    expect(await limiter.hit(ref, login(budget, { ip: "10.0.0.2", email: "ann@example.com" }))).toBeUndefined();
    expect(await limiter.hit(ref, login(budget, { email: "ann@example.com" }))).toBeUndefined();
    expect(await limiter.hit(ref, login(budget, { ip: "10.0.0.1" }))).toBeUndefined();
    expect(await limiter.hit(ref, login(budget, { ip: "10.0.0.1" }))).toBeDefined();
  });

  it("counts a request against every counter it names, and answers the longest wait of those over budget", async () => {
    const { ref } = await fixture.newPool();
    const limiter = createRateLimiter(fixture.database.db, { now: () => 1_800_000_000_000 });
    const counts = [
      {
        name: "login" as const,
        budget: { requests: 1, windowSeconds: 60 },
        subject: { ip: "10.0.0.1", email: "ann@example.com" },
      },
      { name: "login_ip" as const, budget: { requests: 1, windowSeconds: 3600 }, subject: { ip: "10.0.0.1" } },
      {
        name: "login_email" as const,
        budget: { requests: 5, windowSeconds: 60 },
        subject: { email: "ann@example.com" },
      },
    ];
    expect(await limiter.hit(ref, counts)).toBeUndefined();
    const over = await limiter.hit(ref, counts);
    // The clock sits where both windows start: the answer is the hour-long window's wait.
    expect(over!.retryAfterSeconds).toBe(3600);
    // The e-mail counter was counted by both calls: three more fit in its budget of five.
    const emailOnly = [counts[2]!];
    for (let i = 0; i < 3; i++) expect(await limiter.hit(ref, emailOnly)).toBeUndefined();
    expect(await limiter.hit(ref, emailOnly)).toBeDefined();
  });

  it("counts a large budget in batches, overshooting by at most a batch per process", async () => {
    const { ref } = await fixture.newPool();
    const clock = 1_800_000_000_000;
    const limiters = [
      createRateLimiter(fixture.database.db, { now: () => clock }),
      createRateLimiter(fixture.database.db, { now: () => clock }),
    ];
    const counts = [
      { name: "token" as const, budget: { requests: 1000, windowSeconds: 60 }, subject: { ip: "10.0.0.9" } },
    ];
    let allowed = 0;
    for (let i = 0; i < 1100; i++) {
      if (!(await limiters[i % 2]!.hit(ref, counts))) allowed++;
    }
    expect(allowed).toBeGreaterThanOrEqual(1000 - 2 * 10);
    expect(allowed).toBeLessThanOrEqual(1000 + 2 * 10);
  });

  it("reads budgets from the pool's policies, falling back to the defaults for malformed entries", () => {
    expect(budgetOf({}, "token")).toEqual(DEFAULT_BUDGETS.token);
    expect(budgetOf({ rate_limits: { token: { requests: 5, window_seconds: 10 } } }, "token")).toEqual({
      requests: 5,
      windowSeconds: 10,
    });
    expect(budgetOf({ rate_limits: { token: { requests: 0, window_seconds: 10 } } }, "token")).toEqual(
      DEFAULT_BUDGETS.token,
    );
    // The shared budget of an e-mail address is much larger than the one of an address at one client.
    expect(DEFAULT_BUDGETS.login_email.requests).toBeGreaterThanOrEqual(10 * DEFAULT_BUDGETS.login.requests);
  });
});
