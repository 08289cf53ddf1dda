import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { localSignIn } from "../pool-context.js";
import { openAdminTestPlane, type AdminTestPlane, type TestCaller } from "./admin-test-plane.js";

let plane: AdminTestPlane;
let acme: TestCaller;

beforeAll(async () => {
  plane = await openAdminTestPlane();
  acme = await plane.caller();
  await plane.request("POST", "/pools", acme.headers, { name: "links" });
});
afterAll(() => plane.close());

describe(`connection handlers (${engineName})`, () => {
  it("upserts by kind; a disabled local connection closes password sign-in; other kinds are stored only", async () => {
    const pool = (await plane.fixture.pools.get(acme.orgId, "links"))!;
    const ref = { orgId: acme.orgId, poolId: pool.id };
    expect((await localSignIn(plane.services, ref)).open).toBe(true);
    const off = await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "local",
      configJson: "{}",
      enabled: false,
    });
    expect(off.body).toMatchObject({ kind: "local", enabled: false, active: false });
    expect((await localSignIn(plane.services, ref)).open).toBe(false);
    await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "local",
      configJson: "{}",
      enabled: true,
    });
    expect((await localSignIn(plane.services, ref)).open).toBe(true);

    const github = await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "github",
      configJson: '{"client_id":"abc"}',
      enabled: true,
    });
    expect(github.body).toMatchObject({
      kind: "github",
      configJson: '{"client_id":"abc"}',
      enabled: true,
      active: false,
    });
    const listed = await plane.request("GET", "/pools/links/connections", acme.headers);
    expect((listed.body.connections as { kind: string }[]).map((c) => c.kind)).toEqual(["github", "local"]);
  });

  it("refuses a bad kind or configuration naming the field, and deletes by kind", async () => {
    const kind = await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "Bad Kind",
      configJson: "{}",
      enabled: true,
    });
    expect([kind.status, kind.body.message]).toEqual([400, expect.stringMatching(/^body\.kind/)]);
    const config = await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "oidc",
      configJson: "nope",
      enabled: true,
    });
    expect([config.status, config.body.message]).toEqual([400, expect.stringMatching(/^body\.configJson/)]);
    const missing = await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "oidc",
      configJson: "{}",
    });
    expect([missing.status, missing.body.message]).toEqual([400, expect.stringMatching(/enabled/)]);
    await plane.request("POST", "/pools/links/connections", acme.headers, {
      kind: "oidc",
      configJson: "{}",
      enabled: false,
    });
    expect((await plane.request("DELETE", "/pools/links/connections/oidc", acme.headers)).body).toEqual({});
    expect((await plane.request("DELETE", "/pools/links/connections/oidc", acme.headers)).status).toBe(404);
  });
});
