import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineName } from "../identity-test-fixture.js";
import { identityMailOutbox, identityRefreshFamilies } from "../identity-schema.js";
import { verifyPassword } from "../password-hashing.js";
import type { PoolRef } from "../pool-store.js";
import { startFamily } from "../refresh-families.js";
import { createManagedUserStore } from "../user-store.js";
import { openAdminTestPlane, type AdminTestPlane, type TestCaller } from "./admin-test-plane.js";

let plane: AdminTestPlane;
let acme: TestCaller;
let ref: PoolRef;
const password = "correct horse battery";

beforeAll(async () => {
  plane = await openAdminTestPlane();
  acme = await plane.caller();
  await plane.request("POST", "/pools", acme.headers, { name: "people" });
  ref = { orgId: acme.orgId, poolId: (await plane.fixture.pools.get(acme.orgId, "people"))!.id };
});
afterAll(() => plane.close());

async function newUser(email: string, extra: Record<string, unknown> = { password }) {
  const created = await plane.request("POST", "/pools/people/users", acme.headers, { email, ...extra });
  expect(created.status).toBe(200);
  return created.body as { id: string; email: string };
}

/** Starts a session and answers a function telling whether it is still live. */
async function session(userId: string, tenant?: string) {
  const { session: started } = await startFamily(
    plane.fixture.database.db,
    ref,
    { userId, authTimeMs: Date.now(), ...(tenant ? { tenant } : {}) },
    Date.now(),
  );
  return async () => {
    const [row] = await plane.fixture.database.db
      .select({ revokedAt: identityRefreshFamilies.revokedAt })
      .from(identityRefreshFamilies)
      .where(eq(identityRefreshFamilies.id, started.id));
    return row!.revokedAt === 0;
  };
}

describe(`user handlers (${engineName})`, () => {
  it("invites a user created without a password and signs in one created with it", async () => {
    const invited = await newUser("invited@example.com", {});
    const mails = await plane.fixture.database.db
      .select()
      .from(identityMailOutbox)
      .where(and(eq(identityMailOutbox.poolId, ref.poolId), eq(identityMailOutbox.recipient, invited.email)));
    expect(mails.map((m) => m.purpose)).toEqual(["invite"]);
    const withPassword = await newUser("direct@example.com");
    const stored = await createManagedUserStore(plane.fixture.database.db, ref).findByEmail(withPassword.email);
    expect(await verifyPassword(stored!.passwordHash, password)).toBe(true);
  });

  it("pages with nextCursor and refuses a limit over 500", async () => {
    for (let i = 0; i < 5; i++) await newUser(`list${i}@example.com`);
    const first = await plane.request("GET", "/pools/people/users?emailFilter=list&limit=2", acme.headers);
    const second = await plane.request(
      "GET",
      `/pools/people/users?emailFilter=list&limit=2&cursor=${first.body.nextCursor as string}`,
      acme.headers,
    );
    const third = await plane.request(
      "GET",
      `/pools/people/users?emailFilter=list&limit=2&cursor=${second.body.nextCursor as string}`,
      acme.headers,
    );
    const emails = [first, second, third].flatMap((page) =>
      (page.body.users as { email: string }[]).map((u) => u.email),
    );
    expect(emails).toEqual([0, 1, 2, 3, 4].map((i) => `list${i}@example.com`));
    expect(third.body.nextCursor).toBeUndefined();
    const over = await plane.request("GET", "/pools/people/users?limit=501", acme.headers);
    expect([over.status, over.body.message]).toEqual([400, expect.stringMatching(/^query\.limit/)]);
  });

  it("ends sessions on a new password unless kept, on revoke, on ban and on delete", async () => {
    const user = await newUser("sessions@example.com");
    const kept = await session(user.id);
    await plane.request("POST", `/pools/people/users/${user.id}/password`, acme.headers, {
      password: "another long passphrase",
      keepSessions: true,
    });
    expect(await kept()).toBe(true);
    await plane.request("POST", `/pools/people/users/${user.id}/password`, acme.headers, {
      password: "yet another passphrase",
    });
    expect(await kept()).toBe(false);

    const revoked = await session(user.id);
    expect((await plane.request("POST", `/pools/people/users/${user.id}/sessions/revoke`, acme.headers)).status).toBe(
      200,
    );
    expect(await revoked()).toBe(false);

    const banned = await session(user.id);
    expect(
      (await plane.request("POST", `/pools/people/users/${user.id}/ban`, acme.headers, { banned: true })).body.banned,
    ).toBe(true);
    expect(await banned()).toBe(false);

    const deleted = await session(user.id);
    await plane.request("DELETE", `/pools/people/users/${user.id}`, acme.headers);
    expect(await deleted()).toBe(false);
    expect((await plane.request("GET", `/pools/people/users/${user.id}`, acme.headers)).body.deletedAt).toEqual(
      expect.any(String),
    );
  });

  it("refuses a short password with the pool's minimum, and unknown users", async () => {
    await plane.request("PATCH", "/pools/people", acme.headers, { policiesJson: '{"password":{"min_length":20}}' });
    const user = await newUser("policy@example.com", { password: "twenty characters or more" });
    const short = await plane.request("POST", `/pools/people/users/${user.id}/password`, acme.headers, {
      password: "only sixteen chr",
    });
    expect([short.status, short.body.message]).toEqual([400, expect.stringMatching(/password.*20/)]);
    await plane.request("PATCH", "/pools/people", acme.headers, { policiesJson: "{}" });
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      expect((await plane.request("GET", `/pools/people/users/${id}`, acme.headers)).status).toBe(404);
      expect((await plane.request("POST", `/pools/people/users/${id}/roles`, acme.headers, { roles: [] })).status).toBe(
        404,
      );
    }
  });

  it("replaces roles, and a new address without emailVerified is unverified", async () => {
    const user = await newUser("roles@example.com", { password, emailVerified: true, appRoles: ["a"] });
    expect(
      (await plane.request("POST", `/pools/people/users/${user.id}/roles`, acme.headers, { roles: ["b", "c"] })).body
        .appRoles,
    ).toEqual(["b", "c"]);
    const moved = await plane.request("PATCH", `/pools/people/users/${user.id}`, acme.headers, {
      email: "roles2@example.com",
    });
    expect(moved.body).toMatchObject({ email: "roles2@example.com", emailVerified: false, appRoles: ["b", "c"] });
  });
});
