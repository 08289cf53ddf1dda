import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createCredentialStore, type CredentialStore } from "./credential-store.js";
import { createSourceStore, type SourceStore } from "./source-store.js";

let database: TestDatabase;
let sources: SourceStore;
let credentials: CredentialStore;
beforeAll(async () => {
  database = await openTestDatabase();
  sources = createSourceStore(database.db);
  credentials = createCredentialStore(database.db);
});
afterAll(() => database.close());

const bytes = (text: string) => new TextEncoder().encode(text);
const web = (name: string, bucket = "b") => ({
  bucket,
  name,
  description: "",
  provider: "web" as const,
  credentialId: null,
  config: { urls: ["https://example.com/"] },
});

describe(`source store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("inserts, refuses a taken name in the bucket, allows it in another bucket", async () => {
    const orgId = await database.createOrganization();
    const created = await sources.insert(orgId, web("a"));
    expect(created).toMatchObject({ name: "a", provider: "web", internal: false, status: "active" });
    expect(await sources.insert(orgId, web("a"))).toBeUndefined();
    expect(await sources.insert(orgId, web("a", "other"))).toMatchObject({ bucket: "other" });
    expect(await sources.get(orgId, "b", created!.id)).toEqual(created);
    expect(await sources.get(orgId, "other", created!.id)).toBeUndefined();
  });

  it("scopes every query to the organization", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    const row = (await sources.insert(orgA, web("mine")))!;
    expect(await sources.get(orgB, "b", row.id)).toBeUndefined();
    expect(await sources.getAnyBucket(orgB, row.id)).toBeUndefined();
    expect(await sources.list(orgB, "b", {})).toEqual([]);
    expect(await sources.update(orgB, "b", row.id, { name: "theirs" })).toBeUndefined();
    expect(await sources.delete(orgB, "b", row.id)).toBe(false);
    expect(await sources.deleteBucket(orgB, "b")).toBe(0);
    expect((await sources.get(orgA, "b", row.id))!.name).toBe("mine");
  });

  it("keeps one internal source per bucket that update and delete never touch", async () => {
    const orgId = await database.createOrganization();
    const first = await sources.ensureInternal(orgId, "b");
    expect(await sources.ensureInternal(orgId, "b")).toEqual(first);
    expect(await sources.update(orgId, "b", first.id, { name: "x" })).toBeUndefined();
    expect(await sources.delete(orgId, "b", first.id)).toBe(false);
    expect(await sources.deleteBucket(orgId, "b")).toBe(1);
  });

  it("records health", async () => {
    const orgId = await database.createOrganization();
    const row = (await sources.insert(orgId, web("h")))!;
    await sources.setHealth(orgId, row.id, "403 Forbidden");
    expect(await sources.get(orgId, "b", row.id)).toMatchObject({ status: "error", errorMessage: "403 Forbidden" });
    await sources.setHealth(orgId, row.id, undefined);
    expect(await sources.get(orgId, "b", row.id)).toMatchObject({ status: "active", errorMessage: "" });
  });
});

describe(`credential store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  const insert = (orgId: string, name = "c") =>
    credentials.insert(orgId, {
      id: randomUUID(),
      name,
      provider: "google_drive",
      type: "oauth",
      sourceId: null,
      scopes: ["read"],
      expiresAt: 123,
      sealedSecret: bytes("sealed"),
    });

  it("lists metadata only and scopes every query to the organization", async () => {
    const orgA = await database.createOrganization();
    const orgB = await database.createOrganization();
    const row = await insert(orgA);
    expect(Object.keys(row).sort()).toEqual(
      ["createdAt", "expiresAt", "id", "name", "provider", "scopes", "sourceId", "type", "updatedAt"].sort(),
    );
    expect((await credentials.get(orgA, row.id))!.sealedSecret).toEqual(bytes("sealed"));
    expect(await credentials.get(orgB, row.id)).toBeUndefined();
    expect(await credentials.list(orgB, {})).toEqual([]);
    expect(
      await credentials.rotate(orgB, row.id, row.updatedAt, { sealedSecret: bytes("x"), scopes: [], expiresAt: 0 }),
    ).toBeUndefined();
    expect(await credentials.delete(orgB, row.id)).toBe(false);
    expect(await credentials.list(orgA, { provider: "google_drive" })).toEqual([row]);
    expect(await credentials.list(orgA, { provider: "github" })).toEqual([]);
  });

  it("rotates only from the version read: a second rotation from the same version loses", async () => {
    const orgId = await database.createOrganization();
    const row = await insert(orgId);
    const rotated = await credentials.rotate(orgId, row.id, row.updatedAt, {
      sealedSecret: bytes("two"),
      scopes: ["a", "b"],
      expiresAt: 456,
    });
    expect(rotated).toMatchObject({ scopes: ["a", "b"], expiresAt: 456, createdAt: row.createdAt });
    expect(rotated!.updatedAt).toBeGreaterThan(row.updatedAt);
    expect(
      await credentials.rotate(orgId, row.id, row.updatedAt, {
        sealedSecret: bytes("three"),
        scopes: [],
        expiresAt: 0,
      }),
    ).toBeUndefined();
    expect((await credentials.get(orgId, row.id))!.sealedSecret).toEqual(bytes("two"));
  });
});
