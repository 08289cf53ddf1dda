import { createHash } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Logger } from "../../log/logger.js";
import { eq } from "drizzle-orm";
import { composeRecovery, createUser, recover, resetPassword, signup, verifyEmail } from "./account-flows.js";
import { identityMailOutbox } from "./identity-schema.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "./identity-test-fixture.js";
import { createIdentityServices, poolContext, type IdentityServices, type PoolContext } from "./pool-context.js";
import type { PoolPatch } from "./pool-store.js";
import { verifyAccessToken } from "./pool-tokens.js";
import type { OutgoingMail } from "./smtp-mail-sender.js";
import { authorizationCodeGrant, passwordGrant, refreshGrant } from "./token-grants.js";

let fixture: IdentityTestFixture;
let services: IdentityServices;
const mailbox: OutgoingMail[] = [];
const quiet: Logger = { info() {}, warn() {}, error() {} };
beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  services = createIdentityServices(fixture.database.db, fixture.box, {
    logger: quiet,
    sender: { send: async (mail) => void mailbox.push(mail), close() {} },
  });
});
afterAll(() => fixture.close());

async function poolWith(patch: PoolPatch = {}): Promise<PoolContext> {
  const { record } = await fixture.newPool("shop");
  const updated = await fixture.pools.update(record.orgId, record.name, {
    roleCatalog: { roles: { editor: { permissions: ["docs:write"] }, admin: { permissions: ["members:manage"] } } },
    ...patch,
  });
  return poolContext(services, "https://id.example", "acme", updated!);
}

/** Composes a pool's queued recoveries as the issuer's delivery loop does. */
const recoveriesOf = (pool: PoolContext) => (_ref: unknown, request: { readonly to: string }) =>
  composeRecovery(services, pool, request.to);

/** Delivers the outbox (composing `pool`'s recoveries) and answers the token of the newest link sent to `to`. */
async function linkTokenFor(to: string, pool?: PoolContext): Promise<string> {
  await services.outbox.deliverDue(50, pool && recoveriesOf(pool));
  const mail = mailbox.filter((message) => message.to === to).at(-1);
  const match = mail?.text.match(/\?token=([A-Za-z0-9_-]+)/);
  if (!match) throw new Error(`no link was mailed to ${to}`);
  return match[1]!;
}

const invalidGrant = { oauthError: "invalid_grant", code: Code.Unauthenticated };
const accessDenied = { oauthError: "access_denied", code: Code.PermissionDenied };

describe(`account flows and grants (${engineName})`, () => {
  it("signs up with a session, verifies the address from the mailed link, and signs in with the password", async () => {
    const pool = await poolWith();
    const { user, session } = await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    expect(user).toMatchObject({ email: "ada@example.com", emailVerified: false });
    const claims = await verifyAccessToken(services.keys, pool.issuer, session!.access_token);
    expect(claims).toMatchObject({
      sub: user.id,
      iss: "https://id.example/acme/shop",
      aud: "pool:shop",
      email_verified: false,
    });
    expect(session).toMatchObject({ token_type: "bearer", expires_in: 900, refresh_token: expect.any(String) });

    const token = await linkTokenFor("ada@example.com");
    expect(mailbox.at(-1)?.text).toContain(`https://id.example/acme/shop/verify?token=${token}`);
    expect(await verifyEmail(services, pool, token)).toMatchObject({ emailVerified: true });

    const signedIn = await passwordGrant(services, pool, { email: "ADA@example.com", password: "correct horse" });
    expect(decodeJwt(signedIn.access_token)).toMatchObject({ email_verified: true, permissions: [] });
    await expect(signup(services, pool, { email: "Ada@Example.com", password: "another one" })).rejects.toMatchObject({
      code: Code.AlreadyExists,
    });
    await expect(signup(services, pool, { email: "bob@example.com", password: "short" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
  });

  it("answers a wrong password and an unknown address alike", async () => {
    const pool = await poolWith();
    await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    for (const email of ["ada@example.com", "nobody@example.com"]) {
      await expect(passwordGrant(services, pool, { email, password: "wrong horse" })).rejects.toMatchObject({
        ...invalidGrant,
        rawMessage: "invalid e-mail or password",
      });
    }
  });

  it("holds sessions back until the address is verified when the pool says so, and closes sign-up on request", async () => {
    const pool = await poolWith({ settings: { email_verification_required: true } });
    const { session } = await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    expect(session).toBeUndefined();
    await expect(
      passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" }),
    ).rejects.toMatchObject(accessDenied);
    await verifyEmail(services, pool, await linkTokenFor("ada@example.com"));
    expect(await passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" })).toHaveProperty(
      "access_token",
    );

    const closed = await poolWith({ settings: { signup_enabled: false } });
    await expect(signup(services, closed, { email: "x@example.com", password: "correct horse" })).rejects.toMatchObject(
      { code: Code.PermissionDenied },
    );
    await services.connections.upsert(pool.ref, { kind: "local", config: {}, enabled: false });
    await expect(
      passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" }),
    ).rejects.toMatchObject(accessDenied);
  });

  it("resets a password from a mailed link: verified address, sessions ended, new password works", async () => {
    const pool = await poolWith();
    const { session } = await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    await recover(services, pool, "nobody@example.com");
    await recover(services, pool, "ADA@example.com");
    const token = await linkTokenFor("ada@example.com", pool);
    await expect(resetPassword(services, pool, { token, password: "tiny" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    expect(await resetPassword(services, pool, { token, password: "battery staple" })).toMatchObject({
      emailVerified: true,
    });
    await expect(resetPassword(services, pool, { token, password: "battery staple" })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
    await expect(refreshGrant(services, pool, { refreshToken: session!.refresh_token })).rejects.toMatchObject(
      invalidGrant,
    );
    await expect(
      passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" }),
    ).rejects.toMatchObject(invalidGrant);
    expect(
      await passwordGrant(services, pool, { email: "ada@example.com", password: "battery staple" }),
    ).toHaveProperty("access_token");
  });

  it("queues a recovery without looking anyone up; delivery mails a live owner of the address and nobody else", async () => {
    const pool = await poolWith();
    await createUser(services, pool, { email: "ada@example.com", password: "correct horse" });
    const banned = await createUser(services, pool, { email: "ban@example.com", password: "correct horse" });
    await pool.users.setBanned(banned.id, true);
    const lookups: string[] = [];
    const watched: PoolContext = {
      ...pool,
      users: { ...pool.users, findByEmail: (email) => (lookups.push(email), pool.users.findByEmail(email)) },
    };

    for (const email of ["ADA@example.com", "nobody@example.com", "ban@example.com"])
      await recover(services, watched, email);
    // Answering took the same single step for each: nobody was looked up, no link was issued.
    expect(lookups).toEqual([]);
    const queued = await fixture.database.db
      .select()
      .from(identityMailOutbox)
      .where(eq(identityMailOutbox.poolId, pool.ref.poolId));
    expect(queued.map((row) => [row.recipient, row.status, row.subject]).sort()).toEqual([
      ["ADA@example.com", "requested", ""],
      ["ban@example.com", "requested", ""],
      ["nobody@example.com", "requested", ""],
    ]);
    // Without a composer the requests wait; the delivery loop's composer settles them.
    expect(await services.outbox.deliverDue()).toMatchObject({ composed: 0, dropped: 0 });
    const sentBefore = mailbox.length;
    expect(await services.outbox.deliverDue(50, recoveriesOf(watched))).toMatchObject({
      composed: 1,
      dropped: 2,
      sent: 1,
    });
    expect(lookups).toHaveLength(3);
    expect(mailbox.slice(sentBefore).map((mail) => mail.to)).toEqual(["ada@example.com"]);
    // A request that came to nothing leaves no trace of the address asked for.
    const left = await fixture.database.db
      .select()
      .from(identityMailOutbox)
      .where(eq(identityMailOutbox.poolId, pool.ref.poolId));
    expect(left.map((row) => [row.recipient, row.status])).toEqual([["ada@example.com", "sent"]]);
  });

  it("invites a user created without a password, who sets one through the link", async () => {
    const pool = await poolWith();
    const user = await createUser(services, pool, { email: "new@example.com", appRoles: ["editor"] });
    await expect(passwordGrant(services, pool, { email: "new@example.com", password: "" })).rejects.toMatchObject(
      invalidGrant,
    );
    const token = await linkTokenFor("new@example.com");
    expect(mailbox.at(-1)?.subject).toBe("You are invited to shop");
    await resetPassword(services, pool, { token, password: "my first password" });
    const signedIn = await passwordGrant(services, pool, { email: "new@example.com", password: "my first password" });
    expect(decodeJwt(signedIn.access_token)).toMatchObject({ sub: user.id, permissions: ["docs:write"] });
  });

  it("refreshes with the user's current roles and tenants, pins a tenant, and stops a banned user", async () => {
    const pool = await poolWith();
    const { user } = await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    await pool.tenants.create({ slug: "acme" });
    await pool.tenants.setMember("acme", user.id, ["admin"]);
    await expect(
      passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse", tenant: "globex" }),
    ).rejects.toMatchObject(accessDenied);
    const pinned = await passwordGrant(services, pool, {
      email: "ada@example.com",
      password: "correct horse",
      tenant: "acme",
    });
    expect(decodeJwt(pinned.access_token)).toMatchObject({
      tenant: "acme",
      tenants: { acme: { roles: ["admin"], permissions: ["members:manage"] } },
    });

    await pool.users.setRoles(user.id, ["editor"]);
    const refreshed = await refreshGrant(services, pool, { refreshToken: pinned.refresh_token });
    expect(decodeJwt(refreshed.access_token)).toMatchObject({ tenant: "acme", permissions: ["docs:write"] });

    const other = await passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" });
    await pool.users.setBanned(user.id, true);
    await expect(refreshGrant(services, pool, { refreshToken: other.refresh_token })).rejects.toMatchObject(
      invalidGrant,
    );
    await expect(
      passwordGrant(services, pool, { email: "ada@example.com", password: "correct horse" }),
    ).rejects.toMatchObject({ ...accessDenied, rawMessage: "the user is banned" });
  });

  it("exchanges a code for tokens and an ID token verifiable with the pool's JWKS", async () => {
    const pool = await poolWith();
    const { user } = await signup(services, pool, { email: "ada@example.com", password: "correct horse" });
    const verifier = "a".repeat(43);
    const code = await services.codes.issue(pool.ref, {
      userId: user.id,
      clientId: "web",
      redirectUri: "https://app.example/cb",
      codeChallenge: createHash("sha256").update(verifier).digest("base64url"),
      scope: "openid",
      nonce: "n-1",
      tenant: "",
      authTimeMs: services.now(),
    });
    const tokens = await authorizationCodeGrant(services, pool, {
      code,
      clientId: "web",
      redirectUri: "https://app.example/cb",
      codeVerifier: verifier,
    });
    const jwks = createLocalJWKSet(await services.keys.jwks(pool.ref));
    const { payload } = await jwtVerify(tokens.id_token!, jwks, {
      issuer: "https://id.example/acme/shop",
      audience: "web",
    });
    expect(payload).toMatchObject({ sub: user.id, nonce: "n-1", email: "ada@example.com" });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ client_id: "web", aud: "pool:shop" });
    await expect(
      authorizationCodeGrant(services, pool, {
        code,
        clientId: "web",
        redirectUri: "https://app.example/cb",
        codeVerifier: verifier,
      }),
    ).rejects.toMatchObject(invalidGrant);
    await expect(refreshGrant(services, pool, { refreshToken: tokens.refresh_token })).rejects.toMatchObject(
      invalidGrant,
    );
  });
});
