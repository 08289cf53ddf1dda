import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createPoolKeys, type PoolKeys } from "./pool-keys.js";

let fixture: IdentityTestFixture;
let keys: PoolKeys;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  keys = createPoolKeys(fixture.database.db, fixture.box);
});
afterAll(() => fixture.close());

describe(`pool keys (${engineName})`, () => {
  it("publishes one Ed25519 key for a new pool, and the same one on every read", async () => {
    const { ref } = await fixture.newPool();
    const { keys: published } = await keys.jwks(ref);
    expect(published).toEqual([
      {
        kty: "OKP",
        crv: "Ed25519",
        x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        kid: expect.any(String),
        use: "sig",
        alg: "EdDSA",
      },
    ]);
    expect(JSON.stringify(published)).not.toContain('"d"');
    expect((await keys.jwks(ref)).keys).toEqual(published);
  });

  it("signs with the active key, verifiable with the published JWKS by a standard client", async () => {
    const { ref } = await fixture.newPool();
    const token = await keys.sign(ref, { sub: "u1" }, "at+jwt");
    expect(decodeProtectedHeader(token)).toMatchObject({
      alg: "EdDSA",
      typ: "at+jwt",
      kid: (await keys.jwks(ref)).keys[0]!.kid,
    });
    const { payload } = await jwtVerify(token, createLocalJWKSet(await keys.jwks(ref)));
    expect(payload.sub).toBe("u1");
    expect((await keys.verify(ref, token, {})).payload.sub).toBe("u1");
  });

  it("rotates: the new key signs, the old one stays published and verifying", async () => {
    const { ref } = await fixture.newPool();
    const before = await keys.sign(ref, { sub: "before" }, "at+jwt");
    const oldKid = decodeProtectedHeader(before).kid;
    const rotated = await keys.rotate(ref);
    expect(rotated.kid).not.toBe(oldKid);
    const after = await keys.sign(ref, { sub: "after" }, "at+jwt");
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    expect((await keys.jwks(ref)).keys.map((key) => key.kid)).toEqual([rotated.kid, oldKid]);
    expect((await keys.verify(ref, before, {})).payload.sub).toBe("before");
    expect((await keys.verify(ref, after, {})).payload.sub).toBe("after");
  });

  it("refuses a token signed by another pool's key, even with a kid of its own", async () => {
    const { ref: one } = await fixture.newPool();
    const { ref: two } = await fixture.newPool();
    const token = await keys.sign(one, { sub: "x" }, "at+jwt");
    await expect(keys.verify(two, token, {})).rejects.toThrow(/not signed by a key of this pool/);
  });

  it("keeps exactly one active key under concurrent rotations and first uses", async () => {
    const { ref } = await fixture.newPool();
    await Promise.all([keys.jwks(ref), keys.jwks(ref), keys.sign(ref, {}, "JWT")]);
    expect((await keys.jwks(ref)).keys).toHaveLength(1);
    await Promise.all(Array.from({ length: 5 }, () => keys.rotate(ref)));
    const published = (await keys.jwks(ref)).keys;
    expect(published).toHaveLength(6);
    // A fresh instance (another replica) reads the same active key from the database.
    const other = createPoolKeys(fixture.database.db, fixture.box);
    expect(decodeProtectedHeader(await other.sign(ref, {}, "JWT")).kid).toBe(published[0]!.kid);
  });
});
