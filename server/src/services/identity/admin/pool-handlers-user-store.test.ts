import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { identityUsers } from "../identity-schema.js";
import { openTargetStore, type TargetStoreFixture } from "../user-store-migration/target-store-fixture.js";
import { openAdminTestPlane, type AdminTestPlane, type TestCaller } from "./admin-test-plane.js";

let target: TargetStoreFixture;
let plane: AdminTestPlane;
let acme: TestCaller;

beforeAll(async () => {
  target = await openTargetStore();
  plane = await openAdminTestPlane({ connectUserStore: target.connect });
  acme = await plane.caller();
});
afterAll(async () => {
  await plane.close();
  await target.close();
});

/** A pool on the target store with one user; answers how many of its users the target holds. */
async function poolOnTarget(name: string) {
  await plane.request("POST", "/pools", acme.headers, { name });
  const pointed = await plane.request("POST", `/pools/${name}/user-store`, acme.headers, { userStore: target.url });
  expect(pointed.status).toBe(200);
  expect(pointed.body.userStore).toMatchObject({ kind: "USER_STORE_KIND_POSTGRES" });
  expect(JSON.stringify(pointed.body)).not.toContain("secret");
  expect(
    (
      await plane.request("POST", `/pools/${name}/users`, acme.headers, {
        email: `${name}@example.com`,
        password: "correct horse battery",
      })
    ).status,
  ).toBe(200);
  const poolId = (await plane.fixture.pools.get(acme.orgId, name))!.id;
  return async () =>
    (
      await target.db
        .select({ id: identityUsers.id })
        .from(identityUsers)
        .where(and(eq(identityUsers.orgId, acme.orgId), eq(identityUsers.poolId, poolId)))
    ).length;
}

describe(`user-store operations on the admin plane (${engineName})`, () => {
  it("keeps a pool's own store's users when the pool is deleted, unless wipeBucketData", async () => {
    const kept = await poolOnTarget("kept");
    expect(await kept()).toBe(1);
    expect((await plane.request("DELETE", "/pools/kept", acme.headers)).status).toBe(200);
    expect(await kept()).toBe(1);

    const wiped = await poolOnTarget("wiped");
    expect((await plane.request("DELETE", "/pools/wiped", acme.headers, { wipeBucketData: true })).status).toBe(200);
    expect(await wiped()).toBe(0);
  });

  it("refuses a malformed store address naming the field, and abort without a migration", async () => {
    await plane.request("POST", "/pools", acme.headers, { name: "plain" });
    const bad = await plane.request("POST", "/pools/plain/user-store", acme.headers, { userStore: "mysql://db/users" });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringMatching(/^body\.userStore/)]);
    const abort = await plane.request("POST", "/pools/plain/user-store/migrate/abort", acme.headers);
    expect([abort.status, abort.body.code]).toEqual([400, "failed_precondition"]);
  });
});
