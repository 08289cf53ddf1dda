import { randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callIdentityAdmin as call, createOrganization, identityUrl, type TestOrganization } from "./shared-server.js";

// A pool's users moved live to a PostgreSQL database of its own, through the binary. A
// postgres:// store must be a real PostgreSQL server the binary can reach, so this file needs one
// (TEST_DATABASE_URL, or TEST_POSTGRES_SERVER_URL while the platform itself runs embedded).

const serverUrl = process.env.TEST_DATABASE_URL || process.env.TEST_POSTGRES_SERVER_URL;
const PASSWORD = "correct horse battery staple";

async function token(issuer: string, form: Record<string, string>) {
  const response = await fetch(`${issuer}/token`, { method: "POST", body: new URLSearchParams(form) });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, string>,
  };
}

describe.skipIf(!serverUrl)("identity: user-store migration through the binary", () => {
  let acme: TestOrganization;
  let other: TestOrganization;
  let targetUrl: string;
  const database = `e2e_users_${randomBytes(5).toString("hex")}`;
  const admin = () => postgres(serverUrl!, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    [acme, other] = await Promise.all([createOrganization("idmig"), createOrganization("idmig-other")]);
    const sql = admin();
    await sql.unsafe(`create database ${database}`);
    await sql.end();
    const url = new URL(serverUrl!);
    url.pathname = `/${database}`;
    targetUrl = url.toString();
  });
  afterAll(async () => {
    const sql = admin();
    await sql.unsafe(`drop database if exists ${database} with (force)`);
    await sql.end();
  });

  it("moves the users while the pool serves, locks briefly, and users and sessions keep working", async () => {
    const identityAdmin = acme.client.identityAdmin;
    await identityAdmin.createPool({ body: { name: "moving" } });
    const issuer = `${identityUrl()}/${acme.name}/moving`;
    const emails = Array.from({ length: 6 }, (_, i) => `mover${i}@example.com`);
    const userIds: string[] = [];
    for (const email of emails)
      userIds.push(
        (
          await identityAdmin.createUser({
            path: { pool: "moving" },
            body: { email, password: PASSWORD, emailVerified: true },
          })
        ).id,
      );
    await identityAdmin.createTenant({ path: { pool: "moving" }, body: { slug: "crew" } });
    await identityAdmin.setTenantMember({
      path: { pool: "moving", tenant: "crew" },
      body: { userId: userIds[0]!, roles: ["pilot"] },
    });
    const session = await token(issuer, { grant_type: "password", email: emails[0]!, password: PASSWORD });
    expect(session.status).toBe(200);

    expect((await call("POST", "/pools/moving/user-store/migrate", other.headers, { target: targetUrl })).status).toBe(
      404,
    );
    const bad = await call("POST", "/pools/moving/user-store/migrate", acme.headers, {
      target: "postgres://db.example:5432/",
    });
    expect([bad.status, bad.body.code]).toEqual([400, "invalid_argument"]);
    expect(String(bad.body.message)).toMatch(/target/);

    const started = await call("POST", "/pools/moving/user-store/migrate", acme.headers, { target: targetUrl });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({
      state: "migrating",
      migration: {
        phase: "warm_copy",
        usersTotal: 6,
        keepSource: false,
        target: { kind: "USER_STORE_KIND_POSTGRES", bucket: database },
      },
    });
    expect(JSON.stringify(started.body)).not.toContain(targetUrl);

    const phases: string[] = [];
    let locked: { admin: number; retryAfter: string | null; issuer: number } | undefined;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const pool = await identityAdmin.getPool({ path: { pool: "moving" } });
      const phase = pool.migration?.phase;
      if (phase && phases.at(-1) !== phase) phases.push(phase);
      if (phase === "locked_delta" && !locked) {
        const write = await call("POST", "/pools/moving/users", acme.headers, {
          email: "late@example.com",
          password: PASSWORD,
        });
        const signIn = await token(issuer, { grant_type: "password", email: emails[1]!, password: PASSWORD });
        locked = { admin: write.status, retryAfter: write.headers.get("retry-after"), issuer: signIn.status };
      }
      if (!pool.migration) {
        expect(pool).toMatchObject({
          state: "active",
          userStore: { kind: "USER_STORE_KIND_POSTGRES", bucket: database },
        });
        break;
      }
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(phases[0]).toBe("warm_copy");
    expect(locked).toEqual({ admin: 503, retryAfter: expect.stringMatching(/^\d+$/), issuer: 503 });

    const sql = postgres(targetUrl, { max: 1, onnotice: () => {} });
    const rows = await sql<{ email: string }[]>`select email from identity_users order by email`;
    await sql.end();
    expect(rows.map((row) => row.email)).toEqual(emails);

    expect((await token(issuer, { grant_type: "password", email: emails[5]!, password: PASSWORD })).status).toBe(200);
    const refreshed = await token(issuer, { grant_type: "refresh_token", refresh_token: session.json.refresh_token! });
    expect(refreshed.status).toBe(200);
    expect(decodeJwt(refreshed.json.access_token!).tenants).toMatchObject({ crew: { roles: ["pilot"] } });
    const listed = await identityAdmin.listUsers({ path: { pool: "moving" }, query: {} });
    expect(listed.users.map((user) => user.email)).toEqual(emails);
    // Memberships stay in the platform database; their users are now found in the pool's own.
    await identityAdmin.setTenantMember({
      path: { pool: "moving", tenant: "crew" },
      body: { userId: userIds[1]!, roles: ["crew"] },
    });
    const members = await identityAdmin.listTenantMembers({ path: { pool: "moving", tenant: "crew" }, query: {} });
    expect(members.members.map((member) => [member.email, member.roles])).toEqual([
      [emails[0], ["pilot"]],
      [emails[1], ["crew"]],
    ]);

    const none = await call("POST", "/pools/moving/user-store/migrate/abort", acme.headers);
    expect([none.status, none.body.code]).toEqual([400, "failed_precondition"]);
    // Re-pointing copies nothing: back on the managed store, whose copy was purged, the pool is empty.
    const back = await call("POST", "/pools/moving/user-store", acme.headers, { userStore: "" });
    expect(back.body).toMatchObject({ state: "active", userStore: { kind: "USER_STORE_KIND_MANAGED" } });
    expect((await identityAdmin.listUsers({ path: { pool: "moving" }, query: {} })).users).toEqual([]);
  });

  it("aborts a running migration back to the source", async () => {
    const identityAdmin = acme.client.identityAdmin;
    await identityAdmin.createPool({ body: { name: "staying" } });
    await identityAdmin.createUser({
      path: { pool: "staying" },
      body: { email: "stay@example.com", password: PASSWORD, emailVerified: true },
    });
    expect((await call("POST", "/pools/staying/user-store/migrate", acme.headers, { target: targetUrl })).status).toBe(
      200,
    );
    const aborted = await call("POST", "/pools/staying/user-store/migrate/abort", acme.headers);
    // The copy may already have finished on a fast machine; then the abort is refused, and says so.
    if (aborted.status === 200) {
      expect(aborted.body).toMatchObject({ state: "active", userStore: { kind: "USER_STORE_KIND_MANAGED" } });
      expect(aborted.body.migration).toBeUndefined();
    } else {
      expect([aborted.status, aborted.body.code]).toEqual([400, "failed_precondition"]);
    }
    const issuer = `${identityUrl()}/${acme.name}/staying`;
    const deadline = Date.now() + 30_000;
    while ((await identityAdmin.getPool({ path: { pool: "staying" } })).migration) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(
      (await token(issuer, { grant_type: "password", email: "stay@example.com", password: PASSWORD })).status,
    ).toBe(200);
  });
});
