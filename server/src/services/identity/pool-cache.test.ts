import { describe, expect, it } from "vitest";
import { createPoolCache } from "./pool-cache.js";
import type { PoolContext } from "./pool-context.js";

const pool = (name: string, migration: unknown = null) => ({ record: { name, migration } }) as unknown as PoolContext;

function counting(found: PoolContext | undefined) {
  const loader = Object.assign(async () => (loader.calls++, found), { calls: 0 });
  return loader;
}

describe("pool cache", () => {
  it("reuses a resolved pool until the TTL runs out", async () => {
    let clock = 0;
    const cache = createPoolCache({ now: () => clock, ttlMs: 500 });
    const load = counting(pool("app"));
    await cache.resolve("acme", "app", load);
    clock = 499;
    expect((await cache.resolve("acme", "app", load))?.record.name).toBe("app");
    expect(load.calls).toBe(1);
    clock = 500;
    await cache.resolve("acme", "app", load);
    expect(load.calls).toBe(2);
  });

  it("keys by organization and pool", async () => {
    const cache = createPoolCache({ now: () => 0 });
    await cache.resolve("acme", "app", counting(pool("acme-app")));
    expect((await cache.resolve("other", "app", counting(pool("other-app"))))?.record.name).toBe("other-app");
    expect((await cache.resolve("acme", "app", counting(pool("never read"))))?.record.name).toBe("acme-app");
  });

  it("reads again after forget", async () => {
    const cache = createPoolCache({ now: () => 0 });
    await cache.resolve("acme", "app", counting(pool("before")));
    cache.forget("acme", "app");
    expect((await cache.resolve("acme", "app", counting(pool("after"))))?.record.name).toBe("after");
  });

  it("never keeps a pool in a migration, nor an unknown pool", async () => {
    const cache = createPoolCache({ now: () => 0 });
    const migrating = counting(pool("app", { phase: "warm_copy" }));
    await cache.resolve("acme", "app", migrating);
    await cache.resolve("acme", "app", migrating);
    expect(migrating.calls).toBe(2);
    const missing = counting(undefined);
    await cache.resolve("acme", "gone", missing);
    await cache.resolve("acme", "gone", missing);
    expect(missing.calls).toBe(2);
  });

  it("does not keep what a load read before a concurrent forget", async () => {
    const cache = createPoolCache({ now: () => 0 });
    let release!: () => void;
    const slow = cache.resolve("acme", "app", async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return pool("stale");
    });
    cache.forget("acme", "app");
    release();
    expect((await slow)?.record.name).toBe("stale");
    expect((await cache.resolve("acme", "app", counting(pool("fresh"))))?.record.name).toBe("fresh");
  });
});
