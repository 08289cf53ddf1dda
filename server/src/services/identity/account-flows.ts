import { Code, ConnectError } from "@connectrpc/connect";
import type { Database } from "../../db/database.js";
import { composeAccountMail } from "./account-mail.js";
import type { EmailTokenPurpose } from "./identity-schema.js";
import type { QueuedMail } from "./mail-outbox.js";
import { hashPassword } from "./password-hashing.js";
import { checkPassword } from "./password-policy.js";
import { localSignIn, type IdentityServices, type PoolContext } from "./pool-context.js";
import { passwordGrant, type TokenResponse } from "./token-grants.js";
import type { AppUserRecord, NewUser } from "./user-store.js";

/**
 * The account flows of the issuer and the admin API's invitation: sign-up, recovery, reset,
 * verification. Links point at the issuer's hosted pages (`{issuer}/verify?token=...`,
 * `{issuer}/reset?token=...`); an invitation is a reset link with a longer life.
 *
 * The user store may live outside the platform database, so creating a user and queueing its
 * mail are two steps; the link token and the mail commit together. A sign-up whose mail failed
 * to queue leaves a user who can ask for a new link through POST /recover.
 */

/** POST /signup: the user, and a session unless the pool wants a verified address first. */
export async function signup(
  services: IdentityServices,
  pool: PoolContext,
  input: { readonly email: string; readonly password: string },
): Promise<{ readonly user: AppUserRecord; readonly session?: TokenResponse }> {
  if (!pool.settings.signupEnabled) throw new ConnectError("sign-up is disabled for this pool", Code.PermissionDenied);
  if (!(await localSignIn(services, pool.ref)).open)
    throw new ConnectError("e-mail and password sign-in is disabled for this pool", Code.PermissionDenied);
  checkPassword(input.password, pool.settings.passwordMinLength);
  const user = await pool.users.create({ email: input.email, passwordHash: await hashPassword(input.password) });
  await sendLink(services, pool, user, "verify");
  if (pool.settings.emailVerificationRequired) return { user };
  return { user, session: await passwordGrant(services, pool, { email: user.email, password: input.password }) };
}

/**
 * POST /recover: queues a request for a reset link to whoever owns the address, and does nothing
 * else. Looking the owner up waits for delivery ({@link composeRecovery}), so the request takes
 * the same steps, and time, whether the address is registered or not.
 */
export async function recover(services: IdentityServices, pool: PoolContext, email: string): Promise<void> {
  await services.outbox.request(pool.ref, { to: email, purpose: "reset" });
}

/** A queued recovery, at delivery: the reset mail of a live, unbanned owner of the address, or nothing. */
export async function composeRecovery(
  services: IdentityServices,
  pool: PoolContext,
  email: string,
): Promise<((tx: Database) => Promise<QueuedMail>) | undefined> {
  const user = await pool.users.findByEmail(email);
  return user && !user.banned ? (tx) => linkMail(services, pool, user, "reset", tx) : undefined;
}

/**
 * POST /reset with a reset or invitation token: sets the password, marks the address verified
 * (the link proved it) and ends every session of the user.
 */
export async function resetPassword(
  services: IdentityServices,
  pool: PoolContext,
  input: { readonly token: string; readonly password: string },
): Promise<AppUserRecord> {
  checkPassword(input.password, pool.settings.passwordMinLength);
  const passwordHash = await hashPassword(input.password);
  const { userId } = await services.emailTokens
    .consume(pool.ref, input.token, "reset")
    .catch(() => services.emailTokens.consume(pool.ref, input.token, "invite"));
  const updated = await pool.users.setPassword(userId, passwordHash, { endSessions: "password_reset" });
  const verified = updated && (await pool.users.update(userId, { emailVerified: true }));
  if (!verified) throw new ConnectError("user not found", Code.NotFound);
  return verified;
}

/** POST /verify: marks the address of the link's user verified. */
export async function verifyEmail(
  services: IdentityServices,
  pool: PoolContext,
  token: string,
): Promise<AppUserRecord> {
  const { userId } = await services.emailTokens.consume(pool.ref, token, "verify");
  const user = await pool.users.update(userId, { emailVerified: true });
  if (!user) throw new ConnectError("user not found", Code.NotFound);
  return user;
}

/** Admin POST /users: with a password the user can sign in at once; without one, an invitation goes out. */
export async function createUser(
  services: IdentityServices,
  pool: PoolContext,
  input: Omit<NewUser, "passwordHash"> & { readonly password?: string },
): Promise<AppUserRecord> {
  const passwordHash =
    input.password === undefined
      ? null
      : await hashPassword(checkPassword(input.password, pool.settings.passwordMinLength));
  const user = await pool.users.create({
    email: input.email,
    passwordHash,
    emailVerified: input.emailVerified ?? false,
    appRoles: input.appRoles ?? [],
  });
  if (passwordHash === null) await sendLink(services, pool, user, "invite");
  return user;
}

async function sendLink(
  services: IdentityServices,
  pool: PoolContext,
  user: AppUserRecord,
  purpose: EmailTokenPurpose,
): Promise<void> {
  await services.db.transaction(async (tx) =>
    services.outbox.enqueue(pool.ref, await linkMail(services, pool, user, purpose, tx), tx),
  );
}

/** A mail carrying a new link token of `purpose`, issued through `tx` so that it commits with the mail. */
async function linkMail(
  services: IdentityServices,
  pool: PoolContext,
  user: AppUserRecord,
  purpose: EmailTokenPurpose,
  tx: Database,
): Promise<QueuedMail> {
  const token = await services.emailTokens.issue(pool.ref, user.id, purpose, tx);
  const link = `${pool.issuer.issuer}/${purpose === "verify" ? "verify" : "reset"}?token=${encodeURIComponent(token)}`;
  return {
    to: user.email,
    purpose,
    link,
    ...composeAccountMail(purpose, pool.record.displayName || pool.record.name, link),
  };
}
