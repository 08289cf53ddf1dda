import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeys } from "../../../auth/auth-schema.js";
import { createCredentialCache } from "../../../auth/credential-cache.js";
import { announceCredentialChange, followCredentialChanges } from "../../../auth/credential-changes.js";
import { createIamStore } from "../../iam/iam-store.js";
import { within } from "../../../../test/two-processes.js";
import { engineName } from "../identity-test-fixture.js";
import { openAdminTestPlane, type AdminTestPlane } from "./admin-test-plane.js";

// The admin plane authenticates through the api plane's credential cache, as serve wires it: a key
// verified once is not read again until a change notice about it arrives.

let plane: AdminTestPlane;
let stopFollowing: () => Promise<void>;
const credentials = createCredentialCache();

beforeAll(async () => {
  plane = await openAdminTestPlane({ credentials });
  stopFollowing = await followCredentialChanges(plane.fixture.database.handle, credentials);
});
afterAll(async () => {
  await stopFollowing?.();
  await plane?.close();
});

describe(`identity admin auth through the credential cache (${engineName})`, () => {
  it("serves a verified key from memory until a change notice about it arrives", async () => {
    const caller = await plane.caller(["identity.viewer"]);
    expect((await plane.request("GET", "/pools", caller.headers)).status).toBe(200);
    // Revoked behind the IAM store's back, with no notice: only the cache can still accept it.
    const [key] = await plane.fixture.database.db
      .update(apiKeys)
      .set({ state: "revoked" })
      .where(eq(apiKeys.orgId, caller.orgId))
      .returning({ id: apiKeys.id });
    expect((await plane.request("GET", "/pools", caller.headers)).status).toBe(200);
    await announceCredentialChange(plane.fixture.database.db, { keyId: key!.id });
    await within(1000, async () => (await plane.request("GET", "/pools", caller.headers)).status === 401);
    const refused = await plane.request("GET", "/pools", caller.headers);
    expect([refused.status, refused.body.code]).toEqual([401, "unauthenticated"]);
    expect(refused.body.message).toMatch(/was revoked/);
  });

  it("sees a role revoked through the IAM store on the next call", async () => {
    const caller = await plane.caller(["identity.admin"]);
    expect((await plane.request("POST", "/pools", caller.headers, { name: "cached" })).status).toBe(200);
    const iam = createIamStore(plane.fixture.database.db);
    const grants = await iam.listPermissions(caller.orgId, {}, { pageSize: 10, pageToken: "" });
    expect(grants.items.map((grant) => grant.role)).toEqual(["identity.admin"]);
    // The store drops the key from this process's caches before it returns.
    await iam.revokePermission(caller.orgId, grants.items[0]!.id);
    const denied = await plane.request("GET", "/pools", caller.headers);
    expect([denied.status, denied.body.code]).toEqual([403, "permission_denied"]);
  });
});
