import { Code } from "@connectrpc/connect";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnectionStore, connectionActive } from "./connection-store.js";
import { identityPoolKeys, identityPools, identityUsers } from "./identity-schema.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createPoolKeys } from "./pool-keys.js";

let fixture: IdentityTestFixture;
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
});
afterAll(() => fixture.close());

describe(`pool store (${engineName})`, () => {
  it("creates, reads, lists, patches and deletes a pool", async () => {
    const orgId = await fixture.database.createOrganization();
    const created = await fixture.pools.create(orgId, { name: "shop", displayName: "Shop" });
    expect(created).toMatchObject({
      orgId,
      name: "shop",
      displayName: "Shop",
      state: "active",
      settings: {},
      userStore: { kind: "managed" },
    });
    await fixture.pools.create(orgId, { name: "admin" });
    expect((await fixture.pools.list(orgId)).map((pool) => pool.name)).toEqual(["admin", "shop"]);

    const patched = await fixture.pools.update(orgId, "shop", {
      settings: { redirect_uris: ["https://shop.example/cb"] },
      roleCatalog: { roles: { editor: { permissions: ["docs:write"] } } },
    });
    expect(patched).toMatchObject({ displayName: "Shop", settings: { redirect_uris: ["https://shop.example/cb"] } });
    expect(patched!.updatedAt).toBeGreaterThan(created.updatedAt);
    expect((await fixture.pools.update(orgId, "shop", { settings: {} }))!.settings).toEqual({});

    expect(await fixture.pools.delete(orgId, "shop")).toBe(true);
    expect(await fixture.pools.get(orgId, "shop")).toBeUndefined();
    expect(await fixture.pools.delete(orgId, "shop")).toBe(false);
  });

  it("refuses a duplicate name, a bad name and a broken role catalog, naming the field", async () => {
    const orgId = await fixture.database.createOrganization();
    await fixture.pools.create(orgId, { name: "dup" });
    await expect(fixture.pools.create(orgId, { name: "dup" })).rejects.toMatchObject({ code: Code.AlreadyExists });
    await expect(fixture.pools.create(orgId, { name: "Bad_Name" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("name"),
    });
    await expect(
      fixture.pools.update(orgId, "dup", { roleCatalog: { roles: { x: { permissions: [1] } } } }),
    ).rejects.toMatchObject({
      rawMessage: expect.stringContaining("roleCatalogJson.roles.x.permissions[0]"),
    });
  });

  it("keeps another organization's pool out of reach", async () => {
    const { record } = await fixture.newPool("private");
    const other = await fixture.database.createOrganization();
    expect(await fixture.pools.get(other, "private")).toBeUndefined();
    expect(await fixture.pools.update(other, "private", { displayName: "x" })).toBeUndefined();
    expect(await fixture.pools.delete(other, "private")).toBe(false);
    expect(await fixture.pools.get(record.orgId, "private")).toBeDefined();
  });

  it("cascades a pool's deletion to its rows, and refuses a row whose organization is not its pool's", async () => {
    const { record, ref } = await fixture.newPool();
    const db = fixture.database.db;
    await createPoolKeys(db, fixture.box).jwks(ref);
    await db.insert(identityUsers).values({ ...ref, email: "a@example.com", emailNormalized: "a@example.com" });
    const stranger = await fixture.database.createOrganization();
    await expect(
      db
        .insert(identityUsers)
        .values({ orgId: stranger, poolId: ref.poolId, email: "b@example.com", emailNormalized: "b@example.com" }),
    ).rejects.toThrow();

    await fixture.pools.delete(record.orgId, record.name);
    expect(await db.select().from(identityUsers).where(eq(identityUsers.poolId, ref.poolId))).toEqual([]);
    expect(await db.select().from(identityPoolKeys).where(eq(identityPoolKeys.poolId, ref.poolId))).toEqual([]);
    expect(await db.select().from(identityPools).where(eq(identityPools.id, ref.poolId))).toEqual([]);
  });

  it("upserts connections by kind and tells which are active", async () => {
    const { ref } = await fixture.newPool();
    const connections = createConnectionStore(fixture.database.db);
    await connections.upsert(ref, { kind: "local", config: {}, enabled: true });
    const google = await connections.upsert(ref, { kind: "google", config: { client_id: "x" }, enabled: true });
    const replaced = await connections.upsert(ref, { kind: "google", config: { client_id: "y" }, enabled: false });
    expect(replaced).toMatchObject({ config: { client_id: "y" }, enabled: false, createdAt: google.createdAt });
    expect((await connections.list(ref)).map((c) => [c.kind, connectionActive(c)])).toEqual([
      ["google", false],
      ["local", true],
    ]);
    await expect(connections.upsert(ref, { kind: "Bad Kind", config: {}, enabled: true })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    expect(await connections.delete(ref, "google")).toBe(true);
    expect(await connections.get(ref, "google")).toBeUndefined();
  });
});
