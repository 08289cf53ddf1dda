import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox, SECRET_KEY_BYTES } from "../../crypto/secret-box.js";
import { identityRefreshTokens, identityUsers } from "./identity-schema.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import {
  createRefreshFamilies,
  REFRESH_REUSE_GRACE_MS,
  REFRESH_TOKEN_TTL_MS,
  type RefreshFamilies,
} from "./refresh-families.js";
import { createTenantStore } from "./tenant-store.js";
import { createManagedUserStore } from "./user-store.js";

let fixture: IdentityTestFixture;
let clock = Date.now();
let families: RefreshFamilies;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  families = createRefreshFamilies(fixture.database.db, fixture.box, { now: () => clock });
});
afterAll(() => fixture.close());

const userId = "7d3b1c9e-2a4f-4e8b-9c1d-5f6a7b8c9d0e";
const invalidGrant = { code: Code.Unauthenticated, oauthError: "invalid_grant" };

async function tokensOf(sessionId: string) {
  return fixture.database.db.select().from(identityRefreshTokens).where(eq(identityRefreshTokens.familyId, sessionId));
}

describe(`refresh families (${engineName})`, () => {
  it("starts a session whose opaque token is stored only as its hash, and rotates it on every use", async () => {
    const { ref } = await fixture.newPool();
    const started = await families.start(ref, {
      userId,
      clientId: "web",
      tenant: "acme",
      scope: "openid",
      authTimeMs: 1_000,
    });
    expect(started.refreshToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started.session).toMatchObject({
      userId,
      clientId: "web",
      tenant: "acme",
      scope: "openid",
      authTime: 1_000,
      revokedAt: 0,
    });
    expect(JSON.stringify(await tokensOf(started.session.id))).not.toContain(started.refreshToken);

    const second = await families.rotate(ref, started.refreshToken);
    expect(second).toMatchObject({ replayed: false, session: { id: started.session.id } });
    expect(second.refreshToken).not.toBe(started.refreshToken);
    const third = await families.rotate(ref, second.refreshToken);
    expect(third.refreshToken).not.toBe(second.refreshToken);
  });

  it("reads the session's user and tenants in the rotation when asked, and no user once it is deleted", async () => {
    const { ref } = await fixture.newPool();
    const users = createManagedUserStore(fixture.database.db, ref);
    const tenants = createTenantStore(fixture.database.db, ref);
    const ada = await users.create({ email: "ada@example.com", passwordHash: null, appRoles: ["editor"] });
    await tenants.create({ slug: "acme" });
    await tenants.setMember("acme", ada.id, ["admin"]);
    const started = await families.start(ref, { userId: ada.id, authTimeMs: 1_000 });

    const plain = await families.rotate(ref, started.refreshToken);
    expect(plain.owner).toBeUndefined();
    const read = await families.rotate(ref, plain.refreshToken, { readOwner: true });
    expect(read.owner).toEqual({ user: ada, tenants: await tenants.userTenants(ada.id) });
    expect(read.owner?.tenants.map((tenant) => [tenant.slug, tenant.roles])).toEqual([["acme", ["admin"]]]);

    // Gone without its sessions ending (as a deletion made straight in a pool's own database would be).
    await fixture.database.db.update(identityUsers).set({ deletedAt: 1 }).where(eq(identityUsers.id, ada.id));
    expect((await families.rotate(ref, read.refreshToken, { readOwner: true })).owner).toEqual({
      user: undefined,
      tenants: [{ ...read.owner!.tenants[0]! }],
    });
  });

  it("answers a double submit within the grace window with the same successor, and burns the family after it", async () => {
    const { ref } = await fixture.newPool();
    const { refreshToken, session } = await families.start(ref, { userId, authTimeMs: clock });
    const child = await families.rotate(ref, refreshToken);
    clock += REFRESH_REUSE_GRACE_MS - 1;
    expect(await families.rotate(ref, refreshToken)).toMatchObject({
      refreshToken: child.refreshToken,
      replayed: true,
    });

    clock += 2;
    await expect(families.rotate(ref, refreshToken)).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: expect.stringContaining("already used"),
    });
    expect((await families.get(ref, session.id))?.revokedAt).toBeGreaterThan(0);
    // The whole family is gone, the legitimate child included.
    await expect(families.rotate(ref, child.refreshToken)).rejects.toMatchObject(invalidGrant);
  });

  it("refuses a refresh naming another client without rotating the token or ending the session", async () => {
    const { ref } = await fixture.newPool();
    const clientMismatch = { ...invalidGrant, rawMessage: "client_id is not the one the refresh token was issued to" };
    const web = await families.start(ref, { userId, clientId: "web", authTimeMs: clock });
    await expect(families.rotate(ref, web.refreshToken, { clientId: "intruder" })).rejects.toMatchObject(
      clientMismatch,
    );
    // The token was left as it was: its own client rotates it as a first use, not as a replay.
    const second = await families.rotate(ref, web.refreshToken, { clientId: "web" });
    expect(second.replayed).toBe(false);
    // A rotated token named by another client is refused on the careful path too, and burns nothing.
    await expect(families.rotate(ref, web.refreshToken, { clientId: "intruder" })).rejects.toMatchObject(
      clientMismatch,
    );
    expect(await families.rotate(ref, web.refreshToken, { clientId: "web" })).toMatchObject({
      refreshToken: second.refreshToken,
      replayed: true,
    });
    // A request that names no client is not asked for one (the specification's refresh body has none).
    expect((await families.rotate(ref, second.refreshToken)).replayed).toBe(false);

    // A session issued to no client (a password grant that named none) is no client's to refresh.
    const none = await families.start(ref, { userId, authTimeMs: clock });
    await expect(families.rotate(ref, none.refreshToken, { clientId: "web" })).rejects.toMatchObject(clientMismatch);
    expect((await families.get(ref, none.session.id))?.revokedAt).toBe(0);
    expect((await families.rotate(ref, none.refreshToken)).replayed).toBe(false);
  });

  it("burns the family when an older token than the immediate predecessor comes back, even at once", async () => {
    const { ref } = await fixture.newPool();
    const first = await families.start(ref, { userId, authTimeMs: clock });
    const second = await families.rotate(ref, first.refreshToken);
    const third = await families.rotate(ref, second.refreshToken);
    await expect(families.rotate(ref, first.refreshToken)).rejects.toMatchObject(invalidGrant);
    await expect(families.rotate(ref, third.refreshToken)).rejects.toMatchObject(invalidGrant);
  });

  it("stores tokens only as hashes, and derives a successor with the server's key", async () => {
    const { ref } = await fixture.newPool();
    const first = await families.start(ref, { userId, authTimeMs: clock });
    const second = await families.rotate(ref, first.refreshToken);
    const third = await families.rotate(ref, second.refreshToken);
    const stored = JSON.stringify(await tokensOf(first.session.id));
    for (const { refreshToken } of [first, second, third]) expect(stored).not.toContain(refreshToken);
    // The grace answer is derived again, not read back: under another server key it is another token.
    const elsewhere = createRefreshFamilies(fixture.database.db, createSecretBox(randomBytes(SECRET_KEY_BYTES)), {
      now: () => clock,
    });
    const replayedElsewhere = await elsewhere.rotate(ref, second.refreshToken);
    expect(replayedElsewhere.replayed).toBe(true);
    expect(replayedElsewhere.refreshToken).not.toBe(third.refreshToken);
    expect((await families.rotate(ref, second.refreshToken)).refreshToken).toBe(third.refreshToken);
  });

  it("gives 20 concurrent refreshes of one token exactly one child", async () => {
    const { ref } = await fixture.newPool();
    // Several rounds, so the requests meet at the row lock in more than one order.
    for (let round = 0; round < 5; round++) {
      const { refreshToken, session } = await families.start(ref, { userId, authTimeMs: clock });
      const results = await Promise.allSettled(Array.from({ length: 20 }, () => families.rotate(ref, refreshToken)));
      const fulfilled = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
      expect(fulfilled).toHaveLength(20);
      expect(new Set(fulfilled.map((issued) => issued.refreshToken)).size).toBe(1);
      expect(fulfilled.filter((issued) => !issued.replayed)).toHaveLength(1);
      expect(await tokensOf(session.id)).toHaveLength(2);
      expect((await families.get(ref, session.id))?.revokedAt).toBe(0);
      await families.rotate(ref, fulfilled[0]!.refreshToken);
    }
  });

  it("serialises refreshes of a token and of its successor without deadlock", async () => {
    const { ref } = await fixture.newPool();
    for (let round = 0; round < 5; round++) {
      const first = await families.start(ref, { userId, authTimeMs: clock });
      const second = await families.rotate(ref, first.refreshToken);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          families.rotate(ref, i % 2 === 0 ? first.refreshToken : second.refreshToken),
        ),
      );
      // Whatever the order, every refusal is a clean invalid_grant (a replay that came after the
      // successor rotated burns the family), never a database error.
      for (const result of results) {
        if (result.status === "rejected") expect(result.reason).toMatchObject(invalidGrant);
      }
      const children = new Set(
        results.flatMap((result) =>
          result.status === "fulfilled" && result.value.refreshToken !== second.refreshToken
            ? [result.value.refreshToken]
            : [],
        ),
      );
      expect(children.size).toBeLessThanOrEqual(1);
    }
  });

  it("refuses an expired token without ending the session, and an unknown or another pool's token", async () => {
    const { ref } = await fixture.newPool();
    const { ref: other } = await fixture.newPool();
    const { refreshToken, session } = await families.start(ref, { userId, authTimeMs: clock });
    await expect(families.rotate(other, refreshToken)).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: expect.stringContaining("not known"),
    });
    await expect(families.rotate(ref, "made-up")).rejects.toMatchObject(invalidGrant);
    clock += REFRESH_TOKEN_TTL_MS;
    await expect(families.rotate(ref, refreshToken)).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: expect.stringContaining("expired"),
    });
    expect((await families.get(ref, session.id))?.revokedAt).toBe(0);
  });

  it("logs out one session, and signs a user out everywhere", async () => {
    const { ref } = await fixture.newPool();
    const one = await families.start(ref, { userId, authTimeMs: clock });
    const two = await families.start(ref, { userId, authTimeMs: clock });
    const someoneElse = await families.start(ref, {
      userId: "0b7e2d4c-1111-4a2b-8c3d-9e8f7a6b5c4d",
      authTimeMs: clock,
    });
    const rotated = await families.rotate(ref, one.refreshToken);

    // Logging out with the old token of a family still ends the family.
    expect(await families.revokeByToken(ref, one.refreshToken)).toBe(true);
    expect(await families.revokeByToken(ref, one.refreshToken)).toBe(false);
    expect(await families.revokeByToken(ref, "unknown")).toBe(false);
    await expect(families.rotate(ref, rotated.refreshToken)).rejects.toMatchObject({
      ...invalidGrant,
      rawMessage: "the session has ended",
    });

    expect(await families.revokeUser(ref, userId, "user_revoked")).toBe(1);
    await expect(families.rotate(ref, two.refreshToken)).rejects.toMatchObject(invalidGrant);
    expect((await families.rotate(ref, someoneElse.refreshToken)).replayed).toBe(false);
  });
});
