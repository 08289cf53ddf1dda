import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { hashPassword, needsRehash, verifyPassword } from "./password-hashing.js";
import { checkPassword } from "./password-policy.js";

describe("password hashing", () => {
  it("hashes with argon2id at OWASP's parameters into a PHC string, salted per hash", async () => {
    const one = await hashPassword("correct horse battery staple");
    const two = await hashPassword("correct horse battery staple");
    expect(one).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(one).not.toBe(two);
    expect(needsRehash(one)).toBe(false);
  });

  it("verifies the right password and refuses a wrong one, a missing hash and a malformed hash", async () => {
    const stored = await hashPassword("pässwörd-ü");
    expect(await verifyPassword(stored, "pässwörd-ü")).toBe(true);
    expect(await verifyPassword(stored, "passwörd-ü")).toBe(false);
    expect(await verifyPassword(undefined, "pässwörd-ü")).toBe(false);
    expect(await verifyPassword(null, "")).toBe(false);
    expect(await verifyPassword("not a hash", "x")).toBe(false);
  });

  it("spends about as long on an unknown user as on a known one", async () => {
    const stored = await hashPassword("secret-password");
    await verifyPassword(undefined, "warm-up");
    const time = async (stored: string | undefined) => {
      const start = performance.now();
      for (let i = 0; i < 5; i++) await verifyPassword(stored, "wrong-password");
      return performance.now() - start;
    };
    const known = await time(stored);
    const unknown = await time(undefined);
    // Both run one argon2 verification per attempt; a skipped hash would be a thousand times
    // faster, so a loose bound tells the two apart on any machine.
    expect(unknown).toBeGreaterThan(known / 4);
  });

  it("asks for a rehash of a hash made with weaker parameters", async () => {
    const { hash } = await import("@node-rs/argon2");
    expect(needsRehash(await hash("x", { memoryCost: 8192, timeCost: 1, parallelism: 1 }))).toBe(true);
    expect(needsRehash("garbage")).toBe(true);
  });

  it("checks a new password against the pool's minimum and the 128-character cap", () => {
    expect(checkPassword("12345678", 8)).toBe("12345678");
    expect(() => checkPassword("1234567", 8)).toThrow(
      expect.objectContaining({ code: Code.InvalidArgument, rawMessage: "password must be at least 8 characters" }),
    );
    expect(() => checkPassword("x".repeat(129), 8)).toThrow(/at most 128/);
    // Code points, not UTF-16 units: eight emoji are eight characters.
    expect(checkPassword("😀".repeat(8), 8)).toHaveLength(16);
    expect(() => checkPassword("😀".repeat(7), 8)).toThrow(/at least 8/);
  });
});
