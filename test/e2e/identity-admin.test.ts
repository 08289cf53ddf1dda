import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { RestCallError } from "../../sdk/src/index.js";
import { callIdentityAdmin as call, createOrganization, identityUrl, type TestOrganization } from "./shared-server.js";

// The identity admin plane through the binary: the SDK's identityAdmin for what succeeds, plain
// HTTP for each error a caller must be able to tell apart.

let acme: TestOrganization;
let other: TestOrganization;

beforeAll(async () => {
  [acme, other] = await Promise.all([createOrganization("idadm"), createOrganization("idother")]);
});

const admin = () => acme.client.identityAdmin;

describe("identity admin: access", () => {
  it("answers the liveness probe without credentials", async () => {
    const health = await call("GET", "/healthz", {});
    expect([health.status, health.body]).toEqual([200, { status: "ok", service: "identity" }]);
  });

  it("401 without or with an unknown credential", async () => {
    const missing = await call("GET", "/pools", {});
    expect([missing.status, missing.body.code]).toEqual([401, "unauthenticated"]);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const unknown = await call("GET", "/pools", { authorization: `Bearer dk_${"x".repeat(43)}` });
    expect([unknown.status, unknown.body.code]).toEqual([401, "unauthenticated"]);
  });

  it("403 naming the role: a viewer reads but does not write, a key without identity roles does neither", async () => {
    await admin().createPool({ body: { name: "roles" } });
    const viewer = await acme.client.iam.createApiKey({
      orgId: acme.id,
      name: "identity-viewer",
      roles: ["identity.viewer"],
    });
    const asViewer = { authorization: `Bearer ${viewer.secret}` };
    expect((await call("GET", "/pools/roles", asViewer)).status).toBe(200);
    const write = await call("PATCH", "/pools/roles", asViewer, { displayName: "nope" });
    expect([write.status, write.body.code]).toEqual([403, "permission_denied"]);
    expect(write.body.message).toMatch(/identity\.admin/);

    const unrelated = await acme.client.iam.createApiKey({
      orgId: acme.id,
      name: "secrets-only",
      roles: ["secrets.viewer"],
    });
    const read = await call("GET", "/pools", { authorization: `Bearer ${unrelated.secret}` });
    expect([read.status, read.body.code]).toEqual([403, "permission_denied"]);
    expect(read.body.message).toMatch(/identity\.viewer/);
  });

  it("another organization's pool is 404, and its list does not show it", async () => {
    await admin().createPool({ body: { name: "private" } });
    const theirs = await call("GET", "/pools/private", other.headers);
    expect([theirs.status, theirs.body.code]).toEqual([404, "not_found"]);
    const patch = await call("PATCH", "/pools/private", other.headers, { displayName: "taken over" });
    expect(patch.status).toBe(404);
    const users = await call("GET", "/pools/private/users", other.headers);
    expect(users.status).toBe(404);
    expect((await other.client.identityAdmin.listPools({})).pools).toEqual([]);
  });
});

describe("identity admin: pools", () => {
  it("creates a pool with its issuer, keys and local connection; the name is unique and immutable", async () => {
    const pool = await admin().createPool({ body: { name: "shop", displayName: "The Shop" } });
    expect(pool).toMatchObject({
      organization: acme.name,
      name: "shop",
      displayName: "The Shop",
      audience: "pool:shop",
      state: "active",
      policiesJson: "{}",
      settingsJson: "{}",
      userStore: { kind: "USER_STORE_KIND_MANAGED" },
    });
    expect(pool.issuer).toBe(`${identityUrl()}/${acme.name}/shop`);
    expect(pool.jwksUri).toBe(`${pool.issuer}/.well-known/jwks.json`);
    // The issuer it names answers, and names itself the same way.
    const discovery = (await (await fetch(`${pool.issuer}/.well-known/openid-configuration`)).json()) as {
      issuer: string;
      jwks_uri: string;
    };
    expect([discovery.issuer, discovery.jwks_uri]).toEqual([pool.issuer, pool.jwksUri]);
    expect(pool.migration).toBeUndefined();

    const again = await call("POST", "/pools", acme.headers, { name: "shop" });
    expect([again.status, again.body.code]).toEqual([409, "already_exists"]);
    const badName = await call("POST", "/pools", acme.headers, { name: "Shop!" });
    expect([badName.status, badName.body.code]).toEqual([400, "invalid_argument"]);
    expect(badName.body.message).toMatch(/^body\.name/);
    const rename = await call("PATCH", "/pools/shop", acme.headers, { name: "other" });
    expect(rename.status).toBe(400);
    expect(rename.body.message).toMatch(/name/);

    const connections = await admin().listConnections({ path: { pool: "shop" } });
    expect(connections.connections).toMatchObject([{ kind: "local", enabled: true, active: true, configJson: "{}" }]);
    expect((await admin().listPools({})).pools.map((p) => p.name)).toContain("shop");
  });

  it("patches only what is sent, clears a document with {}, and refuses a bad document naming the member", async () => {
    await admin().createPool({ body: { name: "docs" } });
    const settings = JSON.stringify({ redirect_uris: ["https://app.example/callback"], signup_enabled: false });
    const catalog = JSON.stringify({ roles: { editor: { permissions: ["docs:read", "docs:write"] } } });
    await admin().updatePool({ path: { pool: "docs" }, body: { settingsJson: settings, roleCatalogJson: catalog } });
    // Documents come back equal to what was sent, members not necessarily in the same order.
    const renamed = await admin().updatePool({ path: { pool: "docs" }, body: { displayName: "Docs" } });
    expect(renamed.displayName).toBe("Docs");
    expect([JSON.parse(renamed.settingsJson), JSON.parse(renamed.roleCatalogJson)]).toEqual([
      JSON.parse(settings),
      JSON.parse(catalog),
    ]);

    const cleared = await admin().updatePool({ path: { pool: "docs" }, body: { settingsJson: "{}" } });
    expect(cleared).toMatchObject({ displayName: "Docs", settingsJson: "{}" });
    expect(JSON.parse(cleared.roleCatalogJson)).toEqual(JSON.parse(catalog));

    const badUri = await call("PATCH", "/pools/docs", acme.headers, {
      settingsJson: JSON.stringify({ redirect_uris: ["not a uri"] }),
    });
    expect([badUri.status, badUri.body.code]).toEqual([400, "invalid_argument"]);
    expect(badUri.body.message).toMatch(/^body\.settingsJson\.redirect_uris\[0\]/);
    // Well-formed to RFC 3986, but no browser can open it: refused before it can break a page.
    const badPort = await call("PATCH", "/pools/docs", acme.headers, {
      brandingJson: JSON.stringify({ logo_url: "https://x.example:99999/a.png" }),
    });
    expect([badPort.status, badPort.body.code]).toEqual([400, "invalid_argument"]);
    expect(badPort.body.message).toMatch(/^body\.brandingJson\.logo_url: /);
    const badRedirect = await call("PATCH", "/pools/docs", acme.headers, {
      settingsJson: JSON.stringify({ redirect_uris: ["https://app.example:99999/cb"] }),
    });
    expect([badRedirect.status, badRedirect.body.message]).toEqual([
      400,
      expect.stringMatching(/^body\.settingsJson\.redirect_uris\[0\]: /),
    ]);
    const unknownMember = await call("PATCH", "/pools/docs", acme.headers, {
      policiesJson: JSON.stringify({ cors_origins: [] }),
    });
    expect(unknownMember.status).toBe(400);
    expect(unknownMember.body.message).toMatch(/cors_origins/);
    const notJson = await call("PATCH", "/pools/docs", acme.headers, { brandingJson: "{oops" });
    expect(notJson.status).toBe(400);
    expect(notJson.body.message).toMatch(/^body\.brandingJson/);
    expect((await admin().getPool({ path: { pool: "docs" } })).settingsJson).toBe("{}");
  });

  it("rotates keys, upserts and deletes connections, deletes the pool", async () => {
    await admin().createPool({ body: { name: "temp" } });
    const first = await admin().rotatePoolKeys({ path: { pool: "temp" } });
    const second = await admin().rotatePoolKeys({ path: { pool: "temp" } });
    expect(first.key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(second.key.kid).not.toBe(first.key.kid);

    const google = await admin().upsertConnection({
      path: { pool: "temp" },
      body: { kind: "google", configJson: '{"client_id":"x"}', enabled: true },
    });
    expect(google).toMatchObject({ kind: "google", enabled: true, active: false, configJson: '{"client_id":"x"}' });
    const local = await admin().upsertConnection({
      path: { pool: "temp" },
      body: { kind: "local", configJson: "{}", enabled: false },
    });
    expect(local).toMatchObject({ kind: "local", enabled: false, active: false });
    expect((await admin().listConnections({ path: { pool: "temp" } })).connections.map((c) => c.kind)).toEqual([
      "google",
      "local",
    ]);
    await admin().deleteConnection({ path: { pool: "temp", kind: "google" } });
    expect((await call("DELETE", "/pools/temp/connections/google", acme.headers)).status).toBe(404);

    await admin().deletePool({ path: { pool: "temp" }, body: { wipeBucketData: false } });
    const gone = await call("GET", "/pools/temp", acme.headers);
    expect([gone.status, gone.body.code]).toEqual([404, "not_found"]);
  });
});

describe("identity admin: users", () => {
  beforeAll(async () => {
    await admin().createPool({ body: { name: "people" } });
  });

  it("pages through users with nextCursor, filtered by e-mail prefix", async () => {
    for (let i = 0; i < 7; i++) {
      await admin().createUser({
        path: { pool: "people" },
        body: { email: `page${i}@example.com`, password: "correct horse battery" },
      });
    }
    await admin().createUser({
      path: { pool: "people" },
      body: { email: "other@example.com", password: "correct horse battery" },
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await admin().listUsers({
        path: { pool: "people" },
        query: { emailFilter: "PAGE", limit: 3, ...(cursor ? { cursor } : {}) },
      });
      seen.push(...page.users.map((u) => u.email));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `page${i}@example.com`));

    const tooMany = await call("GET", "/pools/people/users?limit=501", acme.headers);
    expect([tooMany.status, tooMany.body.code]).toEqual([400, "invalid_argument"]);
    expect(tooMany.body.message).toMatch(/limit/);
    const badCursor = await call("GET", "/pools/people/users?cursor=nonsense", acme.headers);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.message).toMatch(/cursor/);
  });

  it("refuses bad input naming the field, and a taken address", async () => {
    const badEmail = await call("POST", "/pools/people/users", acme.headers, { email: "not-an-address" });
    expect([badEmail.status, badEmail.body.code]).toEqual([400, "invalid_argument"]);
    expect(badEmail.body.message).toMatch(/^body\.email/);
    const short = await call("POST", "/pools/people/users", acme.headers, {
      email: "short@example.com",
      password: "abc",
    });
    expect(short.status).toBe(400);
    expect(short.body.message).toMatch(/password/);
    const extra = await call("POST", "/pools/people/users", acme.headers, { email: "x@example.com", admin: true });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toMatch(/admin/);
    await admin().createUser({ path: { pool: "people" }, body: { email: "taken@example.com" } });
    const taken = await call("POST", "/pools/people/users", acme.headers, { email: "TAKEN@example.com" });
    expect([taken.status, taken.body.code]).toEqual([409, "already_exists"]);
  });

  it("soft-deletes by default (hidden, still readable by id) and hard-deletes on request", async () => {
    const soft = await admin().createUser({
      path: { pool: "people" },
      body: { email: "soft@example.com", password: "correct horse battery" },
    });
    const hard = await admin().createUser({
      path: { pool: "people" },
      body: { email: "hard@example.com", password: "correct horse battery" },
    });
    await admin().deleteUser({ path: { pool: "people", userId: soft.id } });
    await admin().deleteUser({ path: { pool: "people", userId: hard.id }, body: { hard: true } });

    const listed = await admin().listUsers({ path: { pool: "people" }, query: { emailFilter: "soft" } });
    expect(listed.users).toEqual([]);
    const withDeleted = await admin().listUsers({
      path: { pool: "people" },
      query: { emailFilter: "soft", includeDeleted: true },
    });
    expect(withDeleted.users.map((u) => u.id)).toEqual([soft.id]);
    expect(withDeleted.users[0]!.deletedAt).toBeDefined();
    expect((await admin().getUser({ path: { pool: "people", userId: soft.id } })).deletedAt).toBeDefined();

    // A soft-deleted user keeps its address; a hard delete frees it.
    const reuseSoft = await call("POST", "/pools/people/users", acme.headers, { email: "soft@example.com" });
    expect([reuseSoft.status, reuseSoft.body.code]).toEqual([409, "already_exists"]);
    expect((await call("POST", "/pools/people/users", acme.headers, { email: "hard@example.com" })).status).toBe(200);

    const erased = await call("GET", `/pools/people/users/${hard.id}`, acme.headers);
    expect([erased.status, erased.body.code]).toEqual([404, "not_found"]);
    const again = await call("DELETE", `/pools/people/users/${hard.id}`, acme.headers);
    expect(again.status).toBe(404);
  });

  it("updates, bans, replaces roles and sets passwords", async () => {
    const user = await admin().createUser({
      path: { pool: "people" },
      body: { email: "ops@example.com", emailVerified: true, appRoles: ["viewer"] },
    });
    expect(user).toMatchObject({ email: "ops@example.com", emailVerified: true, appRoles: ["viewer"], banned: false });

    const moved = await admin().updateUser({
      path: { pool: "people", userId: user.id },
      body: { email: "ops2@example.com" },
    });
    expect(moved).toMatchObject({ email: "ops2@example.com", emailVerified: false });
    const banned = await admin().setUserBanned({ path: { pool: "people", userId: user.id }, body: { banned: true } });
    expect(banned.banned).toBe(true);
    expect((await admin().getUser({ path: { pool: "people", userId: user.id } })).banned).toBe(true);
    await admin().setUserBanned({ path: { pool: "people", userId: user.id }, body: { banned: false } });

    const roles = await admin().replaceUserRoles({
      path: { pool: "people", userId: user.id },
      body: { roles: ["editor", "billing:read"] },
    });
    expect(roles.appRoles).toEqual(["editor", "billing:read"]);
    const repeated = await call("POST", `/pools/people/users/${user.id}/roles`, acme.headers, { roles: ["a", "a"] });
    expect(repeated.status).toBe(400);
    expect(repeated.body.message).toMatch(/^body\.roles/);

    await admin().setUserPassword({
      path: { pool: "people", userId: user.id },
      body: { password: "a brand new passphrase" },
    });
    await admin().revokeUserSessions({ path: { pool: "people", userId: user.id } });
    const unknown = await call(
      "POST",
      "/pools/people/users/00000000-0000-4000-8000-000000000000/sessions/revoke",
      acme.headers,
    );
    expect(unknown.status).toBe(404);
  });
});

describe("identity admin: tenants", () => {
  beforeAll(async () => {
    await admin().createPool({ body: { name: "teams" } });
  });

  it("creates, lists, updates and deletes tenants under the slug rules", async () => {
    const created = await admin().createTenant({
      path: { pool: "teams" },
      body: { slug: "acme-eu", displayName: "Acme EU", metadataJson: '{"region":"eu"}' },
    });
    expect(created).toMatchObject({ slug: "acme-eu", displayName: "Acme EU", metadataJson: '{"region":"eu"}' });
    for (const slug of ["Acme", "a_b", "x".repeat(64), ""]) {
      const bad = await call("POST", "/pools/teams/tenants", acme.headers, { slug });
      expect([bad.status, bad.body.code]).toEqual([400, "invalid_argument"]);
      expect(bad.body.message).toMatch(/^body\.slug/);
    }
    const taken = await call("POST", "/pools/teams/tenants", acme.headers, { slug: "acme-eu" });
    expect(taken.status).toBe(409);

    const renamed = await admin().updateTenant({
      path: { pool: "teams", tenant: "acme-eu" },
      body: { displayName: "Acme Europe" },
    });
    expect(renamed).toMatchObject({ displayName: "Acme Europe", metadataJson: '{"region":"eu"}' });
    const cleared = await admin().updateTenant({
      path: { pool: "teams", tenant: "acme-eu" },
      body: { metadataJson: "{}" },
    });
    expect(cleared.metadataJson).toBe("{}");

    await admin().createTenant({ path: { pool: "teams" }, body: { slug: "temp" } });
    expect((await admin().listTenants({ path: { pool: "teams" } })).tenants.map((t) => t.slug)).toEqual([
      "acme-eu",
      "temp",
    ]);
    await admin().deleteTenant({ path: { pool: "teams", tenant: "temp" } });
    expect((await call("DELETE", "/pools/teams/tenants/temp", acme.headers)).status).toBe(404);
  });

  it("replaces a member's roles, pages through members, lists a user's tenants, removes members", async () => {
    await admin().createTenant({ path: { pool: "teams" }, body: { slug: "crew" } });
    const users = [];
    for (let i = 0; i < 5; i++) {
      users.push(
        await admin().createUser({
          path: { pool: "teams" },
          body: { email: `crew${i}@example.com`, password: "correct horse battery" },
        }),
      );
    }
    for (const user of users)
      await admin().setTenantMember({
        path: { pool: "teams", tenant: "crew" },
        body: { userId: user.id, roles: ["member"] },
      });
    const replaced = await admin().setTenantMember({
      path: { pool: "teams", tenant: "crew" },
      body: { userId: users[0]!.id, roles: ["owner"] },
    });
    expect(replaced).toMatchObject({ userId: users[0]!.id, email: "crew0@example.com", roles: ["owner"] });

    const first = await admin().listTenantMembers({ path: { pool: "teams", tenant: "crew" }, query: { limit: 2 } });
    const second = await admin().listTenantMembers({
      path: { pool: "teams", tenant: "crew" },
      query: { limit: 2, cursor: first.nextCursor! },
    });
    const third = await admin().listTenantMembers({
      path: { pool: "teams", tenant: "crew" },
      query: { limit: 2, cursor: second.nextCursor! },
    });
    expect([...first.members, ...second.members, ...third.members].map((m) => m.email)).toEqual(
      users.map((u) => u.email),
    );
    expect(third.nextCursor).toBeUndefined();

    const tenants = await admin().listUserTenants({ path: { pool: "teams", userId: users[0]!.id } });
    expect(tenants.tenants).toMatchObject([{ slug: "crew", roles: ["owner"] }]);

    await admin().removeTenantMember({ path: { pool: "teams", tenant: "crew", userId: users[0]!.id } });
    expect((await admin().listUserTenants({ path: { pool: "teams", userId: users[0]!.id } })).tenants).toEqual([]);
    const notMember = await call("DELETE", `/pools/teams/tenants/crew/members/${users[0]!.id}`, acme.headers);
    expect(notMember.status).toBe(404);
    const unknownUser = await call("POST", "/pools/teams/tenants/crew/members", acme.headers, {
      userId: "00000000-0000-4000-8000-000000000000",
      roles: [],
    });
    expect([unknownUser.status, unknownUser.body.code]).toEqual([404, "not_found"]);
  });
});

describe("identity admin: what tokens carry", () => {
  it("a role replacement, a tenant membership and a ban show in the next password grant", async () => {
    const catalog = {
      roles: { editor: { permissions: ["docs:read", "docs:write"] }, viewer: { permissions: ["docs:read"] } },
    };
    await admin().createPool({ body: { name: "tokens" } });
    await admin().updatePool({ path: { pool: "tokens" }, body: { roleCatalogJson: JSON.stringify(catalog) } });
    const user = await admin().createUser({
      path: { pool: "tokens" },
      body: { email: "t@example.com", password: "correct horse battery", appRoles: ["viewer"] },
    });
    const issuer = acme.client.identityIssuer({ org: acme.name, pool: "tokens" });
    const grant = async () => {
      const tokens = await issuer.token({
        body: { grant_type: "password", email: "t@example.com", password: "correct horse battery" },
      });
      return decodeJwt(tokens.access_token);
    };
    expect((await grant()).permissions).toEqual(["docs:read"]);

    await admin().replaceUserRoles({ path: { pool: "tokens", userId: user.id }, body: { roles: ["editor"] } });
    await admin().createTenant({ path: { pool: "tokens" }, body: { slug: "acme" } });
    await admin().setTenantMember({
      path: { pool: "tokens", tenant: "acme" },
      body: { userId: user.id, roles: ["viewer"] },
    });
    const claims = await grant();
    expect(claims).toMatchObject({
      sub: user.id,
      aud: "pool:tokens",
      permissions: ["docs:read", "docs:write"],
      tenants: { acme: { roles: ["viewer"], permissions: ["docs:read"] } },
    });

    await admin().setUserBanned({ path: { pool: "tokens", userId: user.id }, body: { banned: true } });
    const refused = await issuer
      .token({ body: { grant_type: "password", email: "t@example.com", password: "correct horse battery" } })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RestCallError);
    expect((refused as RestCallError).status).toBeGreaterThanOrEqual(400);
  });
});

describe("identity admin: the SDK's errors", () => {
  it("throws RestCallError with the status and code", async () => {
    const error = await admin()
      .getPool({ path: { pool: "missing" } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RestCallError);
    expect(error).toMatchObject({ status: 404 });
  });
});
