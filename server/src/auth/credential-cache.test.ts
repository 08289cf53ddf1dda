import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createCredentialCache, type VerifiedCredential } from "./credential-cache.js";
import { decodeCredentialChange, encodeCredentialChange } from "./credential-changes.js";

const digest = (secret: string) => createHash("sha256").update(secret).digest();

function credential(keyId: string, orgId = "org-1"): VerifiedCredential {
  return {
    principal: { orgId, orgName: "acme", keyId, roles: new Set(["owner"]) },
    secretPrefix: "dk_abcdefg",
    expiresAt: 0,
    lastUsedAt: 0,
  };
}

function clock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe("credential cache", () => {
  it("answers a stored credential for its hash only", () => {
    const cache = createCredentialCache();
    cache.put(digest("a"), credential("key-a"), cache.ticket());
    expect(cache.get(digest("a"))?.principal.keyId).toBe("key-a");
    expect(cache.get(digest("b"))).toBeUndefined();
  });

  it("compares the whole hash: one sharing the indexed half but differing after it is refused", () => {
    const cache = createCredentialCache();
    const stored = digest("a");
    cache.put(stored, credential("key-a"), cache.ticket());
    const forged = Buffer.from(stored);
    forged[31] = forged[31]! ^ 1;
    expect(cache.get(forged)).toBeUndefined();
    expect(cache.get(stored)).toBeDefined();
  });

  it("drops the entries of a changed key and keeps the others", () => {
    const cache = createCredentialCache();
    cache.put(digest("a"), credential("key-a"), cache.ticket());
    cache.put(digest("b"), credential("key-b"), cache.ticket());
    cache.apply({ keyId: "key-a" });
    expect(cache.get(digest("a"))).toBeUndefined();
    expect(cache.get(digest("b"))?.principal.keyId).toBe("key-b");
    cache.apply({ all: true });
    expect(cache.size).toBe(0);
  });

  it("does not store what a lookup read before a change arrived (the read-then-revoke race)", () => {
    const cache = createCredentialCache();
    const ticket = cache.ticket();
    // The lookup is reading the database when the key is revoked and the notice is applied.
    cache.apply({ keyId: "key-a" });
    cache.put(digest("a"), credential("key-a"), ticket);
    expect(cache.get(digest("a"))).toBeUndefined();
    // A change to any key, or a flush, voids the tickets taken before it.
    const second = cache.ticket();
    cache.apply({ keyId: "key-other" });
    cache.put(digest("a"), credential("key-a"), second);
    const third = cache.ticket();
    cache.flush();
    cache.put(digest("a"), credential("key-a"), third);
    expect(cache.size).toBe(0);
    // A ticket taken after the change stores as usual.
    cache.put(digest("a"), credential("key-a"), cache.ticket());
    expect(cache.get(digest("a"))).toBeDefined();
  });

  it("forgets an entry once its TTL is over", () => {
    const time = clock();
    const cache = createCredentialCache({ ttlMs: 1000, now: time.now });
    cache.put(digest("a"), credential("key-a"), cache.ticket());
    time.advance(999);
    expect(cache.get(digest("a"))).toBeDefined();
    time.advance(1);
    expect(cache.get(digest("a"))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("holds at most maxEntries, evicting the oldest", () => {
    const cache = createCredentialCache({ maxEntries: 3 });
    for (const name of ["a", "b", "c", "d", "e"]) cache.put(digest(name), credential(`key-${name}`), cache.ticket());
    expect(cache.size).toBe(3);
    expect(cache.get(digest("a"))).toBeUndefined();
    expect(cache.get(digest("b"))).toBeUndefined();
    expect(cache.get(digest("e"))?.principal.keyId).toBe("key-e");
  });

  it("stores nothing with maxEntries 0", () => {
    const cache = createCredentialCache({ maxEntries: 0 });
    cache.put(digest("a"), credential("key-a"), cache.ticket());
    expect(cache.size).toBe(0);
  });
});

describe("credential change notices", () => {
  it("round-trip a key change and a flush", () => {
    expect(decodeCredentialChange(encodeCredentialChange({ keyId: "0b7c0b0e-1111-4222-8333-444455556666" }))).toEqual({
      keyId: "0b7c0b0e-1111-4222-8333-444455556666",
    });
    expect(decodeCredentialChange(encodeCredentialChange({ all: true }))).toEqual({ all: true });
  });

  it("read a notice they do not understand as a flush", () => {
    expect(decodeCredentialChange("key:")).toEqual({ all: true });
    expect(decodeCredentialChange("org:something")).toEqual({ all: true });
    expect(decodeCredentialChange("")).toEqual({ all: true });
  });
});
