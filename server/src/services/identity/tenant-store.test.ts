import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createTenantStore } from "./tenant-store.js";
import { ensureUserStoreSchema } from "./postgres-user-store.js";
import { createManagedUserStore } from "./user-store.js";
import { openTargetStore, type TargetStoreFixture } from "./user-store-migration/target-store-fixture.js";

let fixture: IdentityTestFixture;
let ownStore: TargetStoreFixture;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  ownStore = await openTargetStore();
  await ensureUserStoreSchema(ownStore.db);
});
afterAll(async () => {
  await ownStore.close();
  await fixture.close();
});

// The same behaviour whether the pool's users are joined from the platform database or live in a
// database of the pool's own (reached through the user store).
describe.each(["platform database", "pool's own database"] as const)(
  `tenant store (${engineName}), users in the %s`,
  (where) => {
    async function poolOf() {
      const { ref, record } = await fixture.newPool();
      const platformDb = fixture.database.db;
      if (where === "platform database")
        return {
          ref,
          record,
          tenants: createTenantStore(platformDb, ref),
          users: createManagedUserStore(platformDb, ref),
        };
      const users = createManagedUserStore(platformDb, ref, { usersDb: ownStore.db });
      return { ref, record, tenants: createTenantStore(platformDb, ref, users), users };
    }

    it("creates, lists, patches and deletes tenants under the slug rules", async () => {
      const { tenants } = await poolOf();
      const acme = await tenants.create({ slug: "acme", displayName: "Acme", metadata: { plan: "pro" } });
      expect(acme).toMatchObject({ slug: "acme", displayName: "Acme", metadata: { plan: "pro" } });
      await tenants.create({ slug: "a-1" });
      expect((await tenants.list()).map((tenant) => tenant.slug)).toEqual(["a-1", "acme"]);
      await expect(tenants.create({ slug: "acme" })).rejects.toMatchObject({ code: Code.AlreadyExists });
      for (const slug of ["", "Acme", "a_b", "x".repeat(64)]) {
        await expect(tenants.create({ slug })).rejects.toMatchObject({
          code: Code.InvalidArgument,
          rawMessage: expect.stringContaining("slug"),
        });
      }
      expect(await tenants.create({ slug: "x".repeat(63) })).toBeDefined();
      const patched = await tenants.update("acme", { metadata: {} });
      expect(patched).toMatchObject({ displayName: "Acme", metadata: {} });
      expect(patched!.updatedAt).toBeGreaterThan(acme.updatedAt);
      expect(await tenants.update("nope", { displayName: "x" })).toBeUndefined();
      expect(await tenants.delete("acme")).toBe(true);
      expect(await tenants.get("acme")).toBeUndefined();
    });

    it("replaces a member's roles, keeps the join time, lists members by address and the user's tenants", async () => {
      const { tenants, users } = await poolOf();
      await tenants.create({ slug: "acme", displayName: "Acme" });
      await tenants.create({ slug: "globex" });
      const bob = await users.create({ email: "bob@x.io", passwordHash: null });
      const ada = await users.create({ email: "Ada@x.io", passwordHash: null });
      const joined = await tenants.setMember("acme", bob.id, ["viewer"]);
      expect(joined).toEqual({ userId: bob.id, email: "bob@x.io", roles: ["viewer"], createdAt: expect.any(Number) });
      expect(await tenants.setMember("acme", bob.id, ["admin", "viewer"])).toEqual({
        ...joined,
        roles: ["admin", "viewer"],
      });
      await tenants.setMember("acme", ada.id, []);
      await tenants.setMember("globex", bob.id, ["owner"]);

      const first = await tenants.listMembers("acme", { limit: 1 });
      expect(first.members.map((member) => member.email)).toEqual(["Ada@x.io"]);
      const second = await tenants.listMembers("acme", { limit: 1, cursor: first.nextCursor });
      expect(second).toEqual({
        members: [{ userId: bob.id, email: "bob@x.io", roles: ["admin", "viewer"], createdAt: joined.createdAt }],
      });
      expect(await tenants.userTenants(bob.id)).toEqual([
        { slug: "acme", displayName: "Acme", roles: ["admin", "viewer"], createdAt: joined.createdAt },
        { slug: "globex", displayName: "", roles: ["owner"], createdAt: expect.any(Number) },
      ]);

      expect(await tenants.removeMember("acme", bob.id)).toBe(true);
      expect(await tenants.removeMember("acme", bob.id)).toBe(false);
      expect((await tenants.userTenants(bob.id)).map((tenant) => tenant.slug)).toEqual(["globex"]);
      await tenants.delete("globex");
      expect(await tenants.userTenants(bob.id)).toEqual([]);
    });

    it("refuses an unknown tenant, an unknown or deleted user, another pool's user and bad roles", async () => {
      const { tenants, users } = await poolOf();
      const other = await poolOf();
      await tenants.create({ slug: "acme" });
      const stranger = await other.users.create({ email: "s@x.io", passwordHash: null });
      const gone = await users.create({ email: "g@x.io", passwordHash: null });
      await users.delete(gone.id);
      await expect(tenants.setMember("nope", gone.id, [])).rejects.toMatchObject({
        code: Code.NotFound,
        rawMessage: 'tenant "nope" not found',
      });
      await expect(tenants.setMember("acme", stranger.id, [])).rejects.toMatchObject({ code: Code.NotFound });
      await expect(tenants.setMember("acme", gone.id, [])).rejects.toMatchObject({ code: Code.NotFound });
      await expect(tenants.setMember("acme", "not-a-uuid", [])).rejects.toMatchObject({ code: Code.NotFound });
      await expect(tenants.setMember("acme", stranger.id, ["no spaces"])).rejects.toMatchObject({
        code: Code.InvalidArgument,
      });
      await expect(tenants.listMembers("nope", {})).rejects.toMatchObject({ code: Code.NotFound });
      expect(await other.tenants.get("acme")).toBeUndefined();
    });

    it("pages many members by address bytes, then id, whatever the case of the addresses", async () => {
      const { tenants, users } = await poolOf();
      await tenants.create({ slug: "acme" });
      const emails = ["zed@x.io", "Émile@x.io", "amy@x.io", "AMY2@x.io", "bo@x.io", "émile2@x.io", "Carl@x.io"];
      for (const email of emails)
        await tenants.setMember("acme", (await users.create({ email, passwordHash: null })).id, []);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await tenants.listMembers("acme", { limit: 3, ...(cursor ? { cursor } : {}) });
        seen.push(...page.members.map((member) => member.email));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(["AMY2@x.io", "amy@x.io", "bo@x.io", "Carl@x.io", "zed@x.io", "émile2@x.io", "Émile@x.io"]);
    });

    it("hides a soft-deleted member from the member list", async () => {
      const { tenants, users } = await poolOf();
      await tenants.create({ slug: "acme" });
      const ada = await users.create({ email: "ada@x.io", passwordHash: null });
      await tenants.setMember("acme", ada.id, ["admin"]);
      await users.delete(ada.id);
      expect((await tenants.listMembers("acme", {})).members).toEqual([]);
    });
  },
);
