import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { identityPools } from "../identity-schema.js";
import { openAdminTestPlane, TEST_IDENTITY_URL, type AdminTestPlane, type TestCaller } from "./admin-test-plane.js";

let plane: AdminTestPlane;
let acme: TestCaller;

beforeAll(async () => {
  plane = await openAdminTestPlane();
  acme = await plane.caller();
});
afterAll(() => plane.close());

describe(`pool handlers (${engineName})`, () => {
  it("creates a pool with its issuer, an enabled local connection and a signing key", async () => {
    const created = await plane.request("POST", "/pools", acme.headers, { name: "shop", displayName: "Shop" });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      organization: acme.orgName,
      name: "shop",
      issuer: `${TEST_IDENTITY_URL}/${acme.orgName}/shop`,
      jwksUri: `${TEST_IDENTITY_URL}/${acme.orgName}/shop/.well-known/jwks.json`,
      audience: "pool:shop",
      state: "active",
      roleCatalogJson: "{}",
      userStore: { kind: "USER_STORE_KIND_MANAGED" },
    });
    const pool = (await plane.fixture.pools.get(acme.orgId, "shop"))!;
    const ref = { orgId: acme.orgId, poolId: pool.id };
    expect((await plane.services.keys.jwks(ref)).keys).toHaveLength(1);
    expect((await plane.services.connections.get(ref, "local"))?.enabled).toBe(true);
    expect((await plane.request("POST", "/pools", acme.headers, { name: "shop" })).status).toBe(409);
  });

  it("patches partially, clears with {}, and names the member of a bad document", async () => {
    await plane.request("POST", "/pools", acme.headers, { name: "docs" });
    // Documents are stored as jsonb: members come back equal, not necessarily in the order sent.
    const doc = (body: Record<string, unknown>, field: string) => JSON.parse(body[field] as string) as unknown;
    const policies = { cors_allowed_origins: ["https://app.example"], password: { min_length: 12 } };
    expect(
      doc(
        (await plane.request("PATCH", "/pools/docs", acme.headers, { policiesJson: JSON.stringify(policies) })).body,
        "policiesJson",
      ),
    ).toEqual(policies);
    const branded = (
      await plane.request("PATCH", "/pools/docs", acme.headers, { brandingJson: '{"primary_color":"#112233"}' })
    ).body;
    expect([doc(branded, "policiesJson"), doc(branded, "brandingJson")]).toEqual([
      policies,
      { primary_color: "#112233" },
    ]);
    expect((await plane.request("PATCH", "/pools/docs", acme.headers, { policiesJson: "{}" })).body.policiesJson).toBe(
      "{}",
    );

    const cases: [Record<string, string>, RegExp][] = [
      [{ policiesJson: '{"password":{"min_length":4}}' }, /^body\.policiesJson\.password\.min_length/],
      [{ brandingJson: '{"primary_color":"red"}' }, /^body\.brandingJson\.primary_color/],
      [{ roleCatalogJson: '{"roles":{"ed":{"permissions":"x"}}}' }, /^body\.roleCatalogJson\.roles\.ed\.permissions/],
      [{ settingsJson: "[]" }, /^body\.settingsJson/],
      [{ settingsJson: '{"signup_enabled":"yes"}' }, /^body\.settingsJson\.signup_enabled/],
      // URLs of valid syntax that no browser can open: a port past 65535, a host with a space.
      [
        { brandingJson: '{"logo_url":"https://x.example:99999/a.png"}' },
        /^body\.brandingJson\.logo_url: must be a URL a browser can open/,
      ],
      [{ brandingJson: '{"favicon_url":"javascript:alert(1)"}' }, /^body\.brandingJson\.favicon_url/],
      [
        { settingsJson: '{"redirect_uris":["https://app.example/cb","https://app.example:70000/cb"]}' },
        /^body\.settingsJson\.redirect_uris\[1\]: must be a URL/,
      ],
      [
        { policiesJson: '{"cors_allowed_origins":["https://app.example:123456"]}' },
        /^body\.policiesJson\.cors_allowed_origins\[0\]: must be a URL/,
      ],
    ];
    for (const [body, message] of cases) {
      const refused = await plane.request("PATCH", "/pools/docs", acme.headers, body);
      expect([refused.status, refused.body.code], JSON.stringify(body)).toEqual([400, "invalid_argument"]);
      expect(refused.body.message).toMatch(message);
    }
    // A native app's custom-scheme redirect (RFC 8252) is a URL that parses, and is kept.
    const native = { redirect_uris: ["com.example.app:/oauth2redirect", "http://127.0.0.1:8400/cb"] };
    expect(
      doc(
        (await plane.request("PATCH", "/pools/docs", acme.headers, { settingsJson: JSON.stringify(native) })).body,
        "settingsJson",
      ),
    ).toEqual(native);
  });

  it("keeps another organization's pool out of sight", async () => {
    const other = await plane.caller();
    await plane.request("POST", "/pools", other.headers, { name: "theirs" });
    for (const [method, path] of [
      ["GET", "/pools/theirs"],
      ["DELETE", "/pools/theirs"],
      ["POST", "/pools/theirs/rotate-keys"],
    ] as const) {
      expect((await plane.request(method, path, acme.headers)).status).toBe(404);
    }
    expect(
      ((await plane.request("GET", "/pools", acme.headers)).body.pools as { name: string }[]).map((p) => p.name),
    ).not.toContain("theirs");
  });

  it("answers 503 with Retry-After to mutating calls during locked_delta, and shows the migration", async () => {
    await plane.request("POST", "/pools", acme.headers, { name: "moving" });
    const at = Date.now();
    await plane.fixture.database.db
      .update(identityPools)
      .set({
        state: "migrating",
        migration: {
          phase: "locked_delta",
          usersTotal: 3,
          usersCopied: 2,
          target: { kind: "postgres", host: "db:5432", bucket: "users" },
          keepSource: false,
          startedAt: at,
          updatedAt: at,
        },
      })
      .where(eq(identityPools.name, "moving"));
    const read = await plane.request("GET", "/pools/moving", acme.headers);
    expect(read.body).toMatchObject({
      state: "migrating",
      migration: {
        phase: "locked_delta",
        usersTotal: 3,
        usersCopied: 2,
        target: { kind: "USER_STORE_KIND_POSTGRES", host: "db:5432", bucket: "users" },
        keepSource: false,
      },
    });
    const write = await plane.request("PATCH", "/pools/moving", acme.headers, { displayName: "x" });
    expect([write.status, write.body.code]).toEqual([503, "unavailable"]);
    expect(Number(write.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await plane.request("POST", "/pools/moving/users", acme.headers, { email: "a@example.com" })).status).toBe(
      503,
    );
    expect((await plane.request("GET", "/pools/moving/users", acme.headers)).status).toBe(200);
    const deleted = await plane.request("DELETE", "/pools/moving", acme.headers);
    expect(deleted.status).toBe(503);
  });

  it("rotates keys and deletes the pool", async () => {
    await plane.request("POST", "/pools", acme.headers, { name: "brief" });
    const rotated = await plane.request("POST", "/pools/brief/rotate-keys", acme.headers);
    expect(rotated.body.key).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig", alg: "EdDSA" });
    expect((await plane.request("DELETE", "/pools/brief", acme.headers, { wipeBucketData: true })).body).toEqual({});
    expect((await plane.request("GET", "/pools/brief", acme.headers)).status).toBe(404);
  });

  it("checks the caller's role per operation and answers health without credentials", async () => {
    expect((await plane.request("GET", "/healthz", {})).body).toEqual({ status: "ok", service: "identity" });
    expect((await plane.request("GET", "/pools", {})).status).toBe(401);
    const viewer = await plane.keyOf(acme, ["identity.viewer"]);
    expect((await plane.request("GET", "/pools/shop", viewer)).status).toBe(200);
    expect((await plane.request("POST", "/pools/shop/rotate-keys", viewer)).status).toBe(403);
    const owner = await plane.keyOf(acme, ["owner"]);
    expect((await plane.request("POST", "/pools/shop/rotate-keys", owner)).status).toBe(200);
    const mismatch = await plane.request("GET", "/pools", { ...acme.headers, "x-organization-name": "someone-else" });
    expect([mismatch.status, mismatch.body.code]).toEqual([403, "permission_denied"]);
  });
});
