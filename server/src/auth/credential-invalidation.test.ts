import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDatabase } from "../../test/test-database.js";
import { openTwoProcesses, within, type TwoProcesses } from "../../test/two-processes.js";
import { resultRows, type Database, type DatabaseHandle } from "../db/database.js";
import { apiKeys } from "./auth-schema.js";
import { createIamStore, type IamStore } from "../services/iam/iam-store.js";
import { apiKeySecretDigest } from "./api-key-secret.js";
import { authenticate } from "./auth-interceptor.js";
import { createCredentialCache, type CredentialCache } from "./credential-cache.js";
import { announceCredentialChange, followCredentialChanges } from "./credential-changes.js";

// Two "processes" on one database, each with its own pool, credential cache and listener, the
// way two server replicas run; "here" makes the changes through the IAM store. On the embedded
// database there is one process: both names are the same one.

interface Process {
  readonly db: Database;
  readonly cache: CredentialCache;
  readonly store: IamStore;
  stop(): Promise<void>;
}

async function processOn(handle: DatabaseHandle): Promise<Process> {
  const cache = createCredentialCache();
  const unlisten = await followCredentialChanges(handle, cache);
  return { db: handle.db, cache, store: createIamStore(handle.db), stop: unlisten };
}

let database: TestDatabase, here: Process, there: Process;
let processes: TwoProcesses<Process> | undefined;
beforeAll(async () => ({ database, here, there } = processes = await openTwoProcesses(processOn)));
afterAll(() => processes?.close());

const bearer = (secret: string) => `Bearer ${secret}`;
const authOn = (process: Process, secret: string) => authenticate(process.db, bearer(secret), process.cache);

async function refused(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError))
    throw new Error(`expected a refusal, got ${error === undefined ? "success" : String(error)}`);
  return error;
}

const isRefused = (call: Promise<unknown>) =>
  call.then(
    () => false,
    (error: unknown) => error instanceof ConnectError && error.code === Code.Unauthenticated,
  );

async function newKey(roles = ["owner"], expiresAt = 0) {
  const orgId = await database.createOrganization();
  const { key, secret } = await here.store.createApiKey(orgId, { name: "cached", roles, expiresAt });
  return { orgId, keyId: key.id, secret };
}

/** Revokes a key's row behind the store's back: no notice is sent. */
const revokeSilently = (keyId: string) =>
  database.db.update(apiKeys).set({ state: "revoked" }).where(eq(apiKeys.id, keyId));

describe(`credential cache across processes (${process.env.TEST_DATABASE_URL ? "postgres, two pools" : "embedded, one process"})`, () => {
  it("serves a verified key from memory until a change notice about it arrives", async () => {
    const { keyId, secret } = await newKey();
    expect((await authOn(there, secret)).keyId).toBe(keyId);
    // With the row revoked silently, only the cache can still accept the key: it does.
    await revokeSilently(keyId);
    expect((await authOn(there, secret)).keyId).toBe(keyId);
    // Without a cache the same call reads the row and is refused.
    expect((await refused(authenticate(there.db, bearer(secret)))).code).toBe(Code.Unauthenticated);
    await announceCredentialChange(database.db, { keyId });
    await within(1000, () => isRefused(authOn(there, secret)));
  });

  it("refuses a key revoked through one process on the other within one second, and on the first at once", async () => {
    const { orgId, keyId, secret } = await newKey();
    await authOn(here, secret);
    await authOn(there, secret);
    await here.store.revokeApiKey(orgId, keyId);
    // The revoking process dropped the key before the revocation returned.
    expect((await refused(authOn(here, secret))).message).toContain("was revoked");
    const took = await within(1000, () => isRefused(authOn(there, secret)));
    console.info(`revocation reached the other process's cache after ${took} ms`);
  });

  it("drops a changed key from the writer's own caches before the change returns, notice or not", async () => {
    // A cache following the database through a listener that never hears anything: only the
    // writer's direct application can reach it.
    const deaf = createCredentialCache();
    const stop = await followCredentialChanges({ db: database.db, listen: async () => async () => {} }, deaf);
    try {
      const deafProcess = { db: database.db, cache: deaf, store: here.store, stop };
      const { orgId, keyId, secret } = await newKey();
      await authOn(deafProcess, secret);
      await here.store.rotateApiKey(orgId, keyId);
      expect((await refused(authOn(deafProcess, secret))).message).toContain("unknown API key");
      const other = await newKey(["script.viewer"]);
      await authOn(deafProcess, other.secret);
      await here.store.grantPermissions(other.orgId, other.keyId, ["secrets.viewer"], "");
      expect((await authOn(deafProcess, other.secret)).roles.has("secrets.viewer")).toBe(true);
      await here.store.revokeApiKey(other.orgId, other.keyId);
      expect((await refused(authOn(deafProcess, other.secret))).message).toContain("was revoked");
    } finally {
      await stop();
    }
  });

  it("refuses a rotated key's old secret on the other process within one second and accepts the new one", async () => {
    const { orgId, keyId, secret } = await newKey();
    await authOn(there, secret);
    const rotated = await here.store.rotateApiKey(orgId, keyId);
    await within(1000, () => isRefused(authOn(there, secret)));
    expect((await refused(authOn(there, secret))).message).toContain("unknown API key");
    expect((await authOn(there, rotated.secret)).keyId).toBe(keyId);
  });

  it("sees a role granted or revoked through one process on the other within one second", async () => {
    const { orgId, keyId, secret } = await newKey(["script.viewer"]);
    expect([...(await authOn(there, secret)).roles]).toEqual(["script.viewer"]);
    const [grant] = await here.store.grantPermissions(orgId, keyId, ["secrets.viewer"], "");
    await within(1000, async () => (await authOn(there, secret)).roles.has("secrets.viewer"));
    await here.store.revokePermission(orgId, grant!.id);
    await within(1000, async () => !(await authOn(there, secret)).roles.has("secrets.viewer"));
    expect([...(await authOn(here, secret)).roles]).toEqual(["script.viewer"]);
  });

  it("checks a cached key's expiry on every call", async () => {
    const { secret } = await newKey(["owner"], Date.now() + 400);
    await authOn(there, secret);
    expect(there.cache.get(apiKeySecretDigest(secret))).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect((await refused(authOn(there, secret))).message).toContain("expired at");
  });

  it("never stores a refused secret, however many are tried", async () => {
    const before = there.cache.size;
    for (let i = 0; i < 200; i++) {
      const made = `dk_${randomBytes(32).toString("base64url")}`;
      expect((await refused(authOn(there, made))).message).toContain("unknown API key");
    }
    const { orgId, keyId, secret } = await newKey();
    await here.store.revokeApiKey(orgId, keyId);
    for (let i = 0; i < 5; i++) await refused(authOn(there, secret));
    expect(there.cache.size).toBe(before);
  });

  // PostgreSQL only: the embedded database's one connection lives in this process and cannot drop.
  if (process.env.TEST_DATABASE_URL)
    it("flushes everything when the listening connection is lost and made anew", async () => {
      const { secret } = await newKey();
      await authOn(there, secret);
      expect(there.cache.size).toBeGreaterThan(0);
      // Notices sent while the LISTEN connection is down are lost: when it is back, nothing cached
      // before can be trusted.
      const listening = resultRows<{ pid: number }>(
        await database.db.execute(
          sql`select pid from pg_stat_activity where datname = current_database() and query ilike 'listen%' and pid <> pg_backend_pid()`,
        ),
      );
      expect(listening.length).toBeGreaterThan(0);
      for (const { pid } of listening) await database.db.execute(sql`select pg_terminate_backend(${pid})`);
      await within(5000, async () => there.cache.size === 0);
      // And it listens again: a revocation after the reconnect still reaches the other process.
      const fresh = await newKey();
      await authOn(there, fresh.secret);
      await within(5000, async () => {
        await here.store.grantPermissions(fresh.orgId, fresh.keyId, ["secrets.viewer"], "");
        return (await authOn(there, fresh.secret)).roles.has("secrets.viewer");
      });
      await here.store.revokeApiKey(fresh.orgId, fresh.keyId);
      await within(1000, () => isRefused(authOn(there, fresh.secret)));
    });
});
