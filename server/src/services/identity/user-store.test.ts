import { Code } from "@connectrpc/connect";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createRefreshFamilies, type RefreshFamilies } from "./refresh-families.js";
import { createTenantStore } from "./tenant-store.js";
import { identityMemberships, identityTenants } from "./identity-schema.js";
import { ensureUserStoreSchema } from "./postgres-user-store.js";
import { createManagedUserStore } from "./user-store.js";
import { openTargetStore } from "./user-store-migration/target-store-fixture.js";

let fixture: IdentityTestFixture;
let families: RefreshFamilies;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  families = createRefreshFamilies(fixture.database.db, fixture.box);
});
afterAll(() => fixture.close());

async function storeOf() {
  const { ref } = await fixture.newPool();
  return { ref, users: createManagedUserStore(fixture.database.db, ref) };
}

const hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g";

describe(`managed user store (${engineName})`, () => {
  it("creates a user, reads it by id and by address case-insensitively, and refuses the address twice", async () => {
    const { users } = await storeOf();
    const created = await users.create({
      email: " Ada@Example.com ",
      passwordHash: hash,
      appRoles: ["editor", "editor"],
    });
    expect(created).toMatchObject({
      email: "Ada@Example.com",
      emailVerified: false,
      appRoles: ["editor"],
      banned: false,
      deletedAt: 0,
    });
    expect(await users.get(created.id)).toEqual(created);
    expect(await users.findByEmail("ada@EXAMPLE.com")).toEqual({ ...created, passwordHash: hash });
    await expect(users.create({ email: "ADA@example.COM", passwordHash: null })).rejects.toMatchObject({
      code: Code.AlreadyExists,
    });
    await expect(users.create({ email: "not-an-address", passwordHash: null })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: "email is not an e-mail address",
    });
    await expect(
      users.create({ email: "b@example.com", passwordHash: null, appRoles: ["bad role"] }),
    ).rejects.toMatchObject({ rawMessage: expect.stringContaining("appRoles[0]") });
    expect(await users.get("not-a-uuid")).toBeUndefined();
  });

  it("keeps pools apart: the same address in two pools, and no reads across", async () => {
    const one = await storeOf();
    const two = await storeOf();
    const a = await one.users.create({ email: "same@example.com", passwordHash: null });
    await two.users.create({ email: "same@example.com", passwordHash: null });
    expect(await two.users.get(a.id)).toBeUndefined();
    expect(await two.users.setBanned(a.id, true)).toBeUndefined();
    expect(await two.users.delete(a.id, { hard: true })).toBe(false);
  });

  it("pages through users by address with an opaque cursor, a prefix filter and deleted users on request", async () => {
    const { users } = await storeOf();
    const emails = ["carol@x.io", "alice@x.io", "Bob@x.io", "al_x@x.io", "alfred@x.io", "dave@x.io", "al%y@x.io"];
    for (const email of emails) await users.create({ email, passwordHash: null });
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await users.list({ limit: 2, cursor });
      expect(page.users.length).toBeLessThanOrEqual(2);
      seen.push(...page.users.map((user) => user.email));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([
      "al%y@x.io",
      "al_x@x.io",
      "alfred@x.io",
      "alice@x.io",
      "Bob@x.io",
      "carol@x.io",
      "dave@x.io",
    ]);

    // LIKE wildcards in the filter are literal characters.
    expect((await users.list({ emailFilter: "AL_" })).users.map((user) => user.email)).toEqual(["al_x@x.io"]);
    expect((await users.list({ emailFilter: "al" })).users).toHaveLength(4);
    const firstAl = await users.list({ emailFilter: "al", limit: 3 });
    expect(
      (await users.list({ emailFilter: "al", limit: 3, cursor: firstAl.nextCursor })).users.map((user) => user.email),
    ).toEqual(["alice@x.io"]);

    const carol = (await users.findByEmail("carol@x.io"))!;
    await users.delete(carol.id);
    expect((await users.list({})).users.map((user) => user.email)).not.toContain("carol@x.io");
    expect(
      (await users.list({ includeDeleted: true })).users.find((user) => user.id === carol.id)?.deletedAt,
    ).toBeGreaterThan(0);

    await expect(users.list({ limit: 501 })).rejects.toMatchObject({ rawMessage: expect.stringContaining("limit") });
    await expect(users.list({ cursor: "bogus" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("cursor"),
    });
    const otherList = Buffer.from(JSON.stringify(["members", "a", "b"])).toString("base64url");
    await expect(users.list({ cursor: otherList })).rejects.toMatchObject({ code: Code.InvalidArgument });
  });

  it("updates the address (unverifying it unless told), refusing one that is taken", async () => {
    const { users } = await storeOf();
    const ada = await users.create({ email: "ada@example.com", passwordHash: null, emailVerified: true });
    await users.create({ email: "bob@example.com", passwordHash: null });
    const moved = await users.update(ada.id, { email: "ada@new.example" });
    expect(moved).toMatchObject({ email: "ada@new.example", emailVerified: false });
    expect(moved!.updatedAt).toBeGreaterThan(ada.updatedAt);
    expect(await users.update(ada.id, { emailVerified: true })).toMatchObject({ emailVerified: true });
    await expect(users.update(ada.id, { email: "BOB@example.com" })).rejects.toMatchObject({
      code: Code.AlreadyExists,
    });
  });

  it("ends sessions on a new password unless kept, on a ban and on deletion", async () => {
    const { ref, users } = await storeOf();
    const user = await users.create({ email: "s@example.com", passwordHash: null });
    const live = async () => {
      const { session } = await families.start(ref, { userId: user.id, authTimeMs: Date.now() });
      return () => families.get(ref, session.id).then((row) => row?.revokedAt === 0);
    };
    let check = await live();
    await users.setPassword(user.id, hash, { endSessions: false });
    expect(await check()).toBe(true);
    await users.setPassword(user.id, hash, { endSessions: "password_changed" });
    expect(await check()).toBe(false);

    check = await live();
    expect(await users.setBanned(user.id, true)).toMatchObject({ banned: true });
    expect(await check()).toBe(false);
    expect(await users.setBanned(user.id, false)).toMatchObject({ banned: false });

    check = await live();
    expect(await users.setRoles(user.id, ["a", "b:read"])).toMatchObject({ appRoles: ["a", "b:read"] });
    expect(await check()).toBe(true);
    expect(await users.delete(user.id)).toBe(true);
    expect(await check()).toBe(false);
  });

  it("soft-deletes recoverably, keeps the address taken until a hard delete, and hard-deletes with memberships", async () => {
    const { ref, users } = await storeOf();
    const tenants = createTenantStore(fixture.database.db, ref);
    await tenants.create({ slug: "acme" });
    const ada = await users.create({ email: "ada@example.com", passwordHash: null });
    await tenants.setMember("acme", ada.id, ["admin"]);

    expect(await users.delete(ada.id)).toBe(true);
    expect(await users.get(ada.id)).toBeUndefined();
    expect(await users.get(ada.id, { includeDeleted: true })).toMatchObject({ deletedAt: expect.any(Number) });
    expect(await users.findByEmail("ada@example.com")).toBeUndefined();
    expect(await users.delete(ada.id)).toBe(false);
    expect(await users.restore(ada.id)).toMatchObject({ deletedAt: 0 });
    expect(await tenants.userTenants(ada.id)).toHaveLength(1);

    await users.delete(ada.id);
    await expect(users.create({ email: "Ada@example.com", passwordHash: null })).rejects.toMatchObject({
      code: Code.AlreadyExists,
    });
    const bob = await users.create({ email: "bob@example.com", passwordHash: null });
    await expect(users.update(bob.id, { email: "ADA@example.com" })).rejects.toMatchObject({
      code: Code.AlreadyExists,
    });

    expect(await users.delete(ada.id, { hard: true })).toBe(true);
    expect(await users.get(ada.id, { includeDeleted: true })).toBeUndefined();
    expect(await tenants.userTenants(ada.id)).toEqual([]);
    const again = await users.create({ email: "Ada@example.com", passwordHash: null });
    expect(await users.get(again.id)).toBeDefined();
  });

  it("reads a live user with its tenants by slug in one call, from the platform database or a pool's own", async () => {
    const { ref, users } = await storeOf();
    const target = await openTargetStore();
    try {
      await ensureUserStoreSchema(target.db);
      const ownStore = createManagedUserStore(fixture.database.db, ref, { usersDb: target.db });
      const tenants = createTenantStore(fixture.database.db, ref);
      await tenants.create({ slug: "zeta" });
      await tenants.create({ slug: "acme", displayName: "Acme" });
      for (const store of [users, ownStore]) {
        const ada = await store.create({ email: "ada@example.com", passwordHash: null, appRoles: ["editor"] });
        expect(await store.getWithTenants(ada.id)).toEqual({ user: ada, tenants: [] });
        // Written directly: the memberships live in the platform database whichever store holds the user.
        for (const [slug, roles] of [
          ["zeta", ["viewer"]],
          ["acme", ["admin", "billing"]],
        ] as const) {
          const [tenant] = await fixture.database.db
            .select({ id: identityTenants.id })
            .from(identityTenants)
            .where(and(eq(identityTenants.poolId, ref.poolId), eq(identityTenants.slug, slug)));
          await fixture.database.db
            .insert(identityMemberships)
            .values({ ...ref, tenantId: tenant!.id, userId: ada.id, roles: [...roles] });
        }
        const found = await store.getWithTenants(ada.id);
        expect(found?.user).toEqual(ada);
        expect(found?.tenants).toEqual(await tenants.userTenants(ada.id));
        expect(found?.tenants.map((tenant) => [tenant.slug, tenant.roles])).toEqual([
          ["acme", ["admin", "billing"]],
          ["zeta", ["viewer"]],
        ]);
        await store.delete(ada.id);
        expect(await store.getWithTenants(ada.id)).toBeUndefined();
        expect(await store.getWithTenants("not-a-uuid")).toBeUndefined();
      }
    } finally {
      await target.close();
    }
  });
});
