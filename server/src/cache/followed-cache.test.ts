import { describe, expect, it } from "vitest";
import { createFollowedCache } from "./followed-cache.js";

// Tickets, the TTL and eviction are tested through the credential cache built on this one
// (auth/credential-cache.test.ts); here, what only the generic form has.
describe("followed cache", () => {
  it("forgets the entries a change touches and keeps the others", () => {
    const cache = createFollowedCache<string, { owner: string }>();
    cache.put("a", { owner: "x" }, cache.ticket());
    cache.put("b", { owner: "y" }, cache.ticket());
    cache.put("c", { owner: "x" }, cache.ticket());
    cache.forget((_, value) => value.owner === "x");
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, { owner: "y" }, undefined]);
  });

  it("stores nothing read before a change, even one that touched no entry", () => {
    const cache = createFollowedCache<string, number>();
    const ticket = cache.ticket();
    cache.forget(() => false);
    cache.put("a", 1, ticket);
    expect(cache.size).toBe(0);
  });
});
