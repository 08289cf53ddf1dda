import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { identityRefreshFamilies } from "../identity-schema.js";
import { startFamily } from "../refresh-families.js";
import { openAdminTestPlane, type AdminTestPlane, type TestCaller } from "./admin-test-plane.js";

let plane: AdminTestPlane;
let acme: TestCaller;

beforeAll(async () => {
  plane = await openAdminTestPlane();
  acme = await plane.caller();
  await plane.request("POST", "/pools", acme.headers, { name: "teams" });
});
afterAll(() => plane.close());

async function pinnedSession(userId: string, tenant: string) {
  const pool = (await plane.fixture.pools.get(acme.orgId, "teams"))!;
  const { session } = await startFamily(
    plane.fixture.database.db,
    { orgId: acme.orgId, poolId: pool.id },
    { userId, tenant, authTimeMs: Date.now() },
    Date.now(),
  );
  return async () => {
    const [row] = await plane.fixture.database.db
      .select({ revokedAt: identityRefreshFamilies.revokedAt })
      .from(identityRefreshFamilies)
      .where(eq(identityRefreshFamilies.id, session.id));
    return row!.revokedAt === 0;
  };
}

describe(`tenant handlers (${engineName})`, () => {
  it("creates tenants under the slug rule and patches them partially", async () => {
    const created = await plane.request("POST", "/pools/teams/tenants", acme.headers, {
      slug: "eu",
      displayName: "EU",
      metadataJson: '{"tier":"gold"}',
    });
    expect(created.body).toMatchObject({ slug: "eu", displayName: "EU", metadataJson: '{"tier":"gold"}' });
    const bad = await plane.request("POST", "/pools/teams/tenants", acme.headers, { slug: "EU" });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringMatching(/^body\.slug/)]);
    const notObject = await plane.request("POST", "/pools/teams/tenants", acme.headers, {
      slug: "us",
      metadataJson: "[1]",
    });
    expect([notObject.status, notObject.body.message]).toEqual([400, expect.stringMatching(/^body\.metadataJson/)]);
    // An escaped NUL is no NUL in the request's text, but one in the document, which jsonb cannot hold.
    const nul = await plane.request("POST", "/pools/teams/tenants", acme.headers, {
      slug: "us",
      metadataJson: '{"note":["\\u0000"]}',
    });
    expect([nul.status, nul.body.message]).toEqual([
      400,
      "body.metadataJson.note[0]: must not contain the NUL character (U+0000)",
    ]);
    expect(
      (await plane.request("PATCH", "/pools/teams/tenants/eu", acme.headers, { displayName: "Europe" })).body,
    ).toMatchObject({ displayName: "Europe", metadataJson: '{"tier":"gold"}' });
    expect((await plane.request("PATCH", "/pools/teams/tenants/nope", acme.headers, { displayName: "x" })).status).toBe(
      404,
    );
  });

  it("replaces a member's roles, lists the user's tenants, and ends pinned sessions when a membership or tenant ends", async () => {
    await plane.request("POST", "/pools/teams/tenants", acme.headers, { slug: "red" });
    await plane.request("POST", "/pools/teams/tenants", acme.headers, { slug: "blue" });
    const user = (
      await plane.request("POST", "/pools/teams/users", acme.headers, {
        email: "m@example.com",
        password: "correct horse battery",
      })
    ).body as { id: string };
    await plane.request("POST", "/pools/teams/tenants/red/members", acme.headers, {
      userId: user.id,
      roles: ["member"],
    });
    const member = await plane.request("POST", "/pools/teams/tenants/red/members", acme.headers, {
      userId: user.id,
      roles: ["admin"],
    });
    expect(member.body).toMatchObject({ userId: user.id, email: "m@example.com", roles: ["admin"] });
    await plane.request("POST", "/pools/teams/tenants/blue/members", acme.headers, { userId: user.id, roles: [] });
    const tenants = await plane.request("GET", `/pools/teams/users/${user.id}/tenants`, acme.headers);
    expect(tenants.body.tenants).toMatchObject([
      { slug: "blue", roles: [] },
      { slug: "red", roles: ["admin"] },
    ]);

    const red = await pinnedSession(user.id, "red");
    const blue = await pinnedSession(user.id, "blue");
    expect((await plane.request("DELETE", `/pools/teams/tenants/red/members/${user.id}`, acme.headers)).status).toBe(
      200,
    );
    expect([await red(), await blue()]).toEqual([false, true]);
    expect((await plane.request("DELETE", `/pools/teams/tenants/red/members/${user.id}`, acme.headers)).status).toBe(
      404,
    );
    expect((await plane.request("DELETE", "/pools/teams/tenants/blue", acme.headers)).status).toBe(200);
    expect(await blue()).toBe(false);
    expect((await plane.request("GET", `/pools/teams/users/${user.id}/tenants`, acme.headers)).body.tenants).toEqual(
      [],
    );
  });

  it("pages members and refuses unknown tenants and users", async () => {
    await plane.request("POST", "/pools/teams/tenants", acme.headers, { slug: "big" });
    for (let i = 0; i < 3; i++) {
      const user = (await plane.request("POST", "/pools/teams/users", acme.headers, { email: `big${i}@example.com` }))
        .body as { id: string };
      await plane.request("POST", "/pools/teams/tenants/big/members", acme.headers, { userId: user.id, roles: ["r"] });
    }
    const first = await plane.request("GET", "/pools/teams/tenants/big/members?limit=2", acme.headers);
    const second = await plane.request(
      "GET",
      `/pools/teams/tenants/big/members?limit=2&cursor=${first.body.nextCursor as string}`,
      acme.headers,
    );
    expect(
      [...(first.body.members as { email: string }[]), ...(second.body.members as { email: string }[])].map(
        (m) => m.email,
      ),
    ).toEqual(["big0@example.com", "big1@example.com", "big2@example.com"]);
    expect((await plane.request("GET", "/pools/teams/tenants/none/members", acme.headers)).status).toBe(404);
    const unknown = await plane.request("POST", "/pools/teams/tenants/big/members", acme.headers, {
      userId: "00000000-0000-4000-8000-000000000000",
      roles: [],
    });
    expect(unknown.status).toBe(404);
  });
});
