import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createSecretStore, type SecretStore } from "./secret-store.js";

let database: TestDatabase;
let store: SecretStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createSecretStore(database.db);
});
afterAll(() => database.close());

const bytes = (text: string) => new TextEncoder().encode(text);

describe(`secret store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("inserts, reads back and replaces a slot, keeping created_at and moving updated_at", async () => {
    const orgId = await database.createOrganization();
    const created = await store.upsert(orgId, { name: "deploy", type: "git_secret", sealedValue: bytes("one") });
    expect(created).toEqual({
      name: "deploy",
      type: "git_secret",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(created.updatedAt).toBeGreaterThanOrEqual(created.createdAt);
    expect(Math.abs(created.createdAt - Date.now())).toBeLessThan(60_000);

    const rotated = await store.upsert(orgId, { name: "deploy", type: "registry_secret", sealedValue: bytes("two") });
    expect(rotated).toMatchObject({ name: "deploy", type: "registry_secret", createdAt: created.createdAt });
    expect(rotated.updatedAt).toBeGreaterThan(created.updatedAt);

    const row = await store.get(orgId, "deploy");
    expect(row).toEqual({ ...rotated, sealedValue: bytes("two") });
    expect(row!.sealedValue).toBeInstanceOf(Uint8Array);
  });

  it("moves updated_at forward on every write, even within one millisecond", async () => {
    const orgId = await database.createOrganization();
    let previous = (await store.upsert(orgId, { name: "fast", type: "git_secret", sealedValue: bytes("0") })).updatedAt;
    for (let write = 1; write <= 20; write++) {
      const { updatedAt } = await store.upsert(orgId, {
        name: "fast",
        type: "git_secret",
        sealedValue: bytes(String(write)),
      });
      expect(updatedAt).toBeGreaterThan(previous);
      previous = updatedAt;
    }
  });

  it("lists metadata only, in byte order of names", async () => {
    const orgId = await database.createOrganization();
    for (const name of ["beta", "Alpha", "alpha", "a-b", "a_b", "9lives"]) {
      await store.upsert(orgId, { name, type: "git_secret", sealedValue: bytes(name) });
    }
    const listed = await store.list(orgId);
    expect(listed.map((row) => row.name)).toEqual(["9lives", "Alpha", "a-b", "a_b", "alpha", "beta"]);
    for (const row of listed) expect(Object.keys(row).sort()).toEqual(["createdAt", "name", "type", "updatedAt"]);
  });

  it("deletes, answering whether a slot existed", async () => {
    const orgId = await database.createOrganization();
    await store.upsert(orgId, { name: "gone", type: "git_secret", sealedValue: bytes("x") });
    expect(await store.delete(orgId, "gone")).toBe(true);
    expect(await store.delete(orgId, "gone")).toBe(false);
    expect(await store.get(orgId, "gone")).toBeUndefined();
  });

  it("scopes every query to the organization", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    await store.upsert(orgA, { name: "shared-name", type: "git_secret", sealedValue: bytes("a") });
    expect(await store.get(orgB, "shared-name")).toBeUndefined();
    expect(await store.getForUpdate(orgB, "shared-name")).toBeUndefined();
    expect(await store.list(orgB)).toEqual([]);
    expect(await store.delete(orgB, "shared-name")).toBe(false);

    await store.upsert(orgB, { name: "shared-name", type: "registry_secret", sealedValue: bytes("b") });
    expect((await store.get(orgA, "shared-name"))!.sealedValue).toEqual(bytes("a"));
    expect((await store.get(orgB, "shared-name"))!.sealedValue).toEqual(bytes("b"));
    expect(await store.list(orgA)).toHaveLength(1);
  });
});
