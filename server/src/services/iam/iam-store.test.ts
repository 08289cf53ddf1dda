import { Code } from "@connectrpc/connect";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { hashApiKeySecret } from "../../auth/api-key-secret.js";
import { apiKeys, organizations, permissions } from "../../auth/auth-schema.js";
import { createIamStore, type IamStore } from "./iam-store.js";
import { failure } from "../../../test/connect-failure.js";

let database: TestDatabase;
let store: IamStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createIamStore(database.db);
});
afterAll(() => database.close());

const engine = process.env.TEST_DATABASE_URL ? "postgres" : "embedded";

describe(`IAM store (${engine})`, () => {
  it("creates organizations with unique names and hides system organizations", async () => {
    const org = await store.createOrganization({ name: "store-acme", displayName: "Acme" });
    expect(org).toMatchObject({ name: "store-acme", displayName: "Acme", system: false });
    expect((await failure(store.createOrganization({ name: "store-acme", displayName: "" }))).code).toBe(
      Code.AlreadyExists,
    );
    const [system] = await database.db
      .insert(organizations)
      .values({ name: "_store-system", system: true })
      .returning();
    expect(await store.getOrganization(system!.id)).toBeUndefined();
    const all = await store.listOrganizations({ pageSize: 500, pageToken: "" });
    expect(all.items.map((o) => o.name)).not.toContain("_store-system");
  });

  it("pages organizations by name", async () => {
    for (const name of ["page-c", "page-a", "page-b"]) await store.createOrganization({ name, displayName: name });
    const names: string[] = [];
    let pageToken = "";
    do {
      const page = await store.listOrganizations({ pageSize: 2, pageToken });
      names.push(...page.items.map((o) => o.name));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["page-a", "page-b", "page-c"]));
    const only = await store.listOrganizations(
      { pageSize: 10, pageToken: "" },
      (await store.createOrganization({ name: "page-own", displayName: "" })).id,
    );
    expect(only.items.map((o) => o.name)).toEqual(["page-own"]);
  });

  it("stores only the hash of a key and grants its roles in the same transaction", async () => {
    const orgId = await database.createOrganization();
    const { key, secret } = await store.createApiKey(orgId, {
      name: "ci",
      roles: ["script.editor", "git.viewer", "script.editor"],
      expiresAt: 0,
    });
    expect(secret).toMatch(/^dk_/);
    expect(key.secretHash).toBe(hashApiKeySecret(secret));
    expect(key.secretPrefix).toBe(secret.slice(0, 10));
    expect(JSON.stringify(key)).not.toContain(secret);
    const grants = await database.db.select().from(permissions).where(eq(permissions.principal, key.id));
    expect(grants.map((g) => g.role).sort()).toEqual(["git.viewer", "script.editor"]);
    expect(grants.every((g) => g.orgId === orgId && g.resource === "")).toBe(true);
  });

  it("lists keys newest first, by state, across pages", async () => {
    const orgId = await database.createOrganization();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await store.createApiKey(orgId, { name: `k${i}`, roles: [], expiresAt: 0 })).key.id);
    const now = Date.now();
    await database.db
      .update(apiKeys)
      .set({ expiresAt: now - 1 })
      .where(eq(apiKeys.id, ids[1]!));
    await store.revokeApiKey(orgId, ids[2]!);
    const listed: string[] = [];
    let pageToken = "";
    do {
      const page = await store.listApiKeys(orgId, "any", { pageSize: 2, pageToken });
      listed.push(...page.items.map((k) => k.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    // Keys made within one millisecond tie on created_at; the id breaks the tie.
    const rows = await database.db.select().from(apiKeys).where(eq(apiKeys.orgId, orgId));
    const newestFirst = rows.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((k) => k.id);
    expect(listed).toEqual(newestFirst);
    const ofState = async (state: "active" | "revoked" | "expired") =>
      (await store.listApiKeys(orgId, state, { pageSize: 10, pageToken: "" }, now)).items.map((k) => k.id);
    expect(await ofState("expired")).toEqual([ids[1]]);
    expect(await ofState("revoked")).toEqual([ids[2]]);
    expect(await ofState("active")).toEqual(newestFirst.filter((id) => [ids[0], ids[3], ids[4]].includes(id)));
  });

  it("rejects a page token it did not write", async () => {
    const orgId = await database.createOrganization();
    for (const token of [
      "garbage",
      Buffer.from('["x","y"]').toString("base64url"),
      Buffer.from('[1,"not-a-uuid"]').toString("base64url"),
    ]) {
      const error = await failure(store.listApiKeys(orgId, "any", { pageSize: 2, pageToken: token }));
      expect(error.code).toBe(Code.InvalidArgument);
      expect(error.rawMessage).toContain("page_token");
    }
  });

  it("rotates the secret of an active key only", async () => {
    const orgId = await database.createOrganization();
    const first = await store.createApiKey(orgId, { name: "rot", roles: ["script.viewer"], expiresAt: 0 });
    const rotated = await store.rotateApiKey(orgId, first.key.id, 1234);
    expect(rotated.secret).not.toBe(first.secret);
    expect(rotated.key).toMatchObject({
      id: first.key.id,
      rotatedAt: 1234,
      secretHash: hashApiKeySecret(rotated.secret),
      secretPrefix: rotated.secret.slice(0, 10),
    });
    const grants = await database.db.select().from(permissions).where(eq(permissions.principal, first.key.id));
    expect(grants.map((g) => g.role)).toEqual(["script.viewer"]);

    await store.revokeApiKey(orgId, first.key.id);
    expect((await failure(store.rotateApiKey(orgId, first.key.id))).code).toBe(Code.FailedPrecondition);
    const expiring = await store.createApiKey(orgId, { name: "exp", roles: [], expiresAt: Date.now() + 1000 });
    expect((await failure(store.rotateApiKey(orgId, expiring.key.id, Date.now() + 2000))).code).toBe(
      Code.FailedPrecondition,
    );
    expect((await failure(store.rotateApiKey(orgId, "00000000-0000-4000-8000-000000000000"))).code).toBe(Code.NotFound);
  });

  it("revokes irreversibly, keeping the record and deleting its grants", async () => {
    const orgId = await database.createOrganization();
    const { key } = await store.createApiKey(orgId, { name: "rev", roles: ["owner"], expiresAt: 0 });
    const revoked = await store.revokeApiKey(orgId, key.id, 5000);
    expect(revoked).toMatchObject({ id: key.id, state: "revoked", revokedAt: 5000 });
    expect(await database.db.select().from(permissions).where(eq(permissions.principal, key.id))).toEqual([]);
    expect(await store.revokeApiKey(orgId, key.id, 9000)).toEqual(revoked);
    expect(await store.getApiKey(orgId, key.id)).toEqual(revoked);
  });

  it("grants idempotently and swaps the tier of a family on the same resource", async () => {
    const orgId = await database.createOrganization();
    const { key } = await store.createApiKey(orgId, { name: "g", roles: ["git.viewer"], expiresAt: 0 });
    const repo = "drn:platform:git:local:acme:repo/1";
    const [onRepo] = await store.grantPermissions(orgId, key.id, ["git.viewer"], repo);
    const [again] = await store.grantPermissions(orgId, key.id, ["git.viewer"], repo);
    expect(again).toEqual(onRepo);
    const [editor] = await store.grantPermissions(orgId, key.id, ["git.editor"], repo);
    const grants = await store.listPermissions(orgId, { principal: key.id }, { pageSize: 10, pageToken: "" });
    // The repository grant changed tier; the organization-wide git.viewer stays.
    expect(grants.items.map((g) => [g.role, g.resource]).sort((a, b) => a[1]!.localeCompare(b[1]!))).toEqual([
      ["git.viewer", ""],
      ["git.editor", repo],
    ]);
    expect(editor!.role).toBe("git.editor");
  });

  it("grants only to active keys of the organization", async () => {
    const orgId = await database.createOrganization();
    const otherOrg = await database.createOrganization();
    const { key: foreign } = await store.createApiKey(otherOrg, { name: "f", roles: [], expiresAt: 0 });
    expect((await failure(store.grantPermissions(orgId, foreign.id, ["script.viewer"], ""))).code).toBe(Code.NotFound);
    const { key } = await store.createApiKey(orgId, { name: "r", roles: [], expiresAt: 0 });
    await store.revokeApiKey(orgId, key.id);
    expect((await failure(store.grantPermissions(orgId, key.id, ["script.viewer"], ""))).code).toBe(Code.NotFound);
  });

  it("lists grants by filter across pages and revokes one", async () => {
    const orgId = await database.createOrganization();
    const { key } = await store.createApiKey(orgId, {
      name: "l",
      roles: ["script.viewer", "data.viewer", "builds.viewer"],
      expiresAt: 0,
    });
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await store.listPermissions(orgId, {}, { pageSize: 2, pageToken });
      seen.push(...page.items.map((g) => g.role));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen.sort()).toEqual(["builds.viewer", "data.viewer", "script.viewer"]);
    const [dataGrant] = (await store.listPermissions(orgId, { role: "data.viewer" }, { pageSize: 10, pageToken: "" }))
      .items;
    await store.revokePermission(orgId, dataGrant!.id);
    expect((await failure(store.revokePermission(orgId, dataGrant!.id))).code).toBe(Code.NotFound);
    const other = await database.createOrganization();
    const [scriptGrant] = (
      await store.listPermissions(orgId, { principal: key.id, role: "script.viewer" }, { pageSize: 10, pageToken: "" })
    ).items;
    expect((await failure(store.revokePermission(other, scriptGrant!.id))).code).toBe(Code.NotFound);
  });
});
