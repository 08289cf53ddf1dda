import { Code } from "@connectrpc/connect";
import { and, eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../../db/database.js";
import { engineName, openIdentityTestFixture, type IdentityTestFixture } from "../identity-test-fixture.js";
import { identityUsers, identityUserStoreMigrations, type MigrationPhase } from "../identity-schema.js";
import { hashPassword } from "../password-hashing.js";
import { createIdentityServices, poolContext, type IdentityServices } from "../pool-context.js";
import type { PoolRecord, PoolRef } from "../pool-store.js";
import { passwordGrant, refreshGrant } from "../token-grants.js";
import { migrationControl, type MigrationControl } from "./migration-control.js";
import { assertPoolWritable, poolLockedForMigration } from "./migration-lock.js";
import type { MigrationHooks } from "./migration-steps.js";
import { startMigrationWorker, type MigrationWorker } from "./migration-worker.js";
import { openTargetStore, type TargetStoreFixture } from "./target-store-fixture.js";

const silent = { info() {}, warn() {}, error() {} };
const PASSWORD = "correct horse battery staple";

let fixture: IdentityTestFixture;
let target: TargetStoreFixture;
let services: IdentityServices;
let control: MigrationControl;
let passwordHash: string;
const workers: MigrationWorker[] = [];

beforeAll(async () => {
  fixture = await openIdentityTestFixture();
  target = await openTargetStore();
  services = createIdentityServices(fixture.database.db, fixture.box, {
    logger: silent,
    ...(target.connect ? { connectUserStore: target.connect } : {}),
  });
  control = migrationControl({ db: fixture.database.db, directory: services.userStores });
  passwordHash = await hashPassword(PASSWORD);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
});
afterAll(async () => {
  await services.userStores.close();
  await target.close();
  await fixture.close();
});

function worker(hooks?: MigrationHooks, options: { leaseMs?: number } = {}) {
  return startMigrationWorker({
    db: fixture.database.db,
    directory: services.userStores,
    logger: silent,
    leaseMs: options.leaseMs ?? 5_000,
    pollMs: 20,
    batchSize: 4,
    lockDrainMs: 30,
    ...(hooks ? { hooks } : {}),
  }).then((started) => (workers.push(started), started));
}

const reload = async (record: PoolRecord) => (await fixture.pools.get(record.orgId, record.name))!;
const context = async (record: PoolRecord) =>
  poolContext(services, "http://identity.test", "org", await reload(record));
const rowsIn = async (db: Database, ref: PoolRef) =>
  (
    await db
      .select({ id: identityUsers.id })
      .from(identityUsers)
      .where(and(eq(identityUsers.orgId, ref.orgId), eq(identityUsers.poolId, ref.poolId)))
  ).length;

/** Waits until the migration has ended (done or failed) and its job has nothing left to erase. */
async function settled(record: PoolRecord, timeoutMs = 20_000): Promise<PoolRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await reload(record);
    const jobs = await fixture.database.db
      .select()
      .from(identityUserStoreMigrations)
      .where(eq(identityUserStoreMigrations.poolId, record.id));
    if (jobs.length === 0 && (current.migration === null || current.migration.phase === "failed")) return current;
    if (Date.now() > deadline) throw new Error(`migration did not settle: ${JSON.stringify(current.migration)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function poolWithUsers(count: number) {
  const { record, ref } = await fixture.newPool();
  const users = (await context(record)).users;
  const created = [];
  for (let i = 0; i < count; i++)
    created.push(
      await users.create({ email: `user${String(i).padStart(2, "0")}@example.com`, passwordHash, emailVerified: true }),
    );
  return { record, ref, created };
}

describe(`user-store migration (${engineName}; target ${process.env.TEST_DATABASE_URL ? "a PostgreSQL database" : "a second PGlite"})`, () => {
  it("re-points a pool at a postgres store without copying, and back", async () => {
    const { record, ref, created } = await poolWithUsers(2);
    const pointed = await control.setUserStore(record, target.url);
    expect(pointed.userStore).toEqual({
      kind: "postgres",
      host: expect.stringMatching(/:\d+$/),
      bucket: expect.stringMatching(/^users_/),
    });
    expect(JSON.stringify(pointed.userStore)).not.toContain("secret");
    const there = await context(record);
    expect((await there.users.list({})).users).toEqual([]);
    const newcomer = await there.users.create({ email: "new@example.com", passwordHash });
    expect(await rowsIn(target.db, ref)).toBe(1);
    await expect(
      passwordGrant(services, there, { email: "new@example.com", password: PASSWORD }),
    ).resolves.toMatchObject({ token_type: "bearer" });

    await control.setUserStore(record, "k3+sa://reader@k3.example:9000/users");
    const k3 = await context(record);
    expect((await reload(record)).userStore).toEqual({
      kind: "k3",
      serviceAccount: "reader",
      host: "k3.example:9000",
      bucket: "users",
    });
    await expect(k3.users.get(newcomer.id)).rejects.toMatchObject({ code: Code.FailedPrecondition });

    await control.setUserStore(record, "");
    expect((await (await context(record)).users.list({})).users.map((user) => user.id)).toEqual(
      created.map((user) => user.id),
    );
    await expect(control.setUserStore(record, "mysql://x")).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("userStore"),
    });
    await expect(control.setUserStore(record, "postgres://host.example:5432/")).rejects.toMatchObject({
      rawMessage: expect.stringContaining("names no database"),
    });
  });

  it("migrates live: writes during the warm copy arrive, the pool locks for the delta, sessions and sign-in survive", async () => {
    const { record, ref, created } = await poolWithUsers(10);
    const signedIn = await passwordGrant(services, await context(record), {
      email: created[0]!.email,
      password: PASSWORD,
    });
    let copies = 0;
    const seen = new Set<MigrationPhase | "discarding">();
    let lockedCheck: unknown;
    await worker({
      async beforeStep(phase) {
        seen.add(phase);
        if (phase === "warm_copy" && ++copies === 2) {
          const users = (await context(record)).users;
          await users.create({ email: "during@example.com", passwordHash });
          await users.update(created[1]!.id, { email: "renamed@example.com" });
          await users.delete(created[9]!.id, { hard: true });
          await users.delete(created[8]!.id);
          await users.setRoles(created[2]!.id, ["editor"]);
        }
        if (phase === "locked_delta") {
          const current = await reload(record);
          lockedCheck = poolLockedForMigration(current)
            ? (() => {
                try {
                  assertPoolWritable(current);
                } catch (error) {
                  return error;
                }
              })()
            : "not locked";
        }
      },
    });
    const started = await control.start(record, { target: target.url });
    expect(started).toMatchObject({
      state: "migrating",
      migration: { phase: "warm_copy", usersTotal: 10, usersCopied: 0, keepSource: false },
    });
    await expect(control.start(record, { target: target.url })).rejects.toMatchObject({
      code: Code.FailedPrecondition,
    });
    const done = await settled(record);

    expect(lockedCheck).toMatchObject({ code: Code.Unavailable });
    expect((lockedCheck as { metadata: Headers }).metadata.get("retry-after")).toBe("2");
    expect([...seen]).toEqual(["warm_copy", "locked_delta", "verifying", "cutover", "purging", "done"]);
    expect(done).toMatchObject({ state: "active", migration: null, userStore: { kind: "postgres" } });
    expect(await rowsIn(fixture.database.db, ref)).toBe(0);
    expect(await rowsIn(target.db, ref)).toBe(10);
    const moved = await context(record);
    expect((await moved.users.get(created[1]!.id))?.email).toBe("renamed@example.com");
    expect((await moved.users.get(created[2]!.id))?.appRoles).toEqual(["editor"]);
    expect(await moved.users.get(created[8]!.id, { includeDeleted: true })).toMatchObject({
      deletedAt: expect.any(Number),
    });
    expect(await moved.users.get(created[9]!.id, { includeDeleted: true })).toBeUndefined();
    await expect(
      passwordGrant(services, moved, { email: "during@example.com", password: PASSWORD }),
    ).resolves.toMatchObject({ token_type: "bearer" });
    await expect(refreshGrant(services, moved, { refreshToken: signedIn.refresh_token })).resolves.toMatchObject({
      token_type: "bearer",
    });
  });

  it("rolls back when verification finds a difference", async () => {
    const { record, ref, created } = await poolWithUsers(5);
    let spoiled = 0;
    await worker({
      async beforeStep(phase) {
        if (phase === "verifying" && !spoiled++)
          await target.db.update(identityUsers).set({ banned: true }).where(eq(identityUsers.id, created[3]!.id));
      },
    });
    await control.start(record, { target: target.url, keepSource: true });
    const failed = await settled(record);
    expect(failed).toMatchObject({
      state: "migration_failed",
      userStore: { kind: "managed" },
      migration: { phase: "failed", error: expect.stringContaining(created[3]!.id) },
    });
    expect(poolLockedForMigration(failed)).toBe(false);
    expect(await rowsIn(target.db, ref)).toBe(0);
    await expect(
      passwordGrant(services, await context(record), { email: created[3]!.email, password: PASSWORD }),
    ).resolves.toMatchObject({ token_type: "bearer" });
    // A failed migration can be tried again.
    await expect(control.start(await reload(record), { target: target.url })).resolves.toMatchObject({
      state: "migrating",
    });
    await expect(settled(record)).resolves.toMatchObject({ state: "active", migration: null });
  });

  it("aborts during the copy and rolls back to the source", async () => {
    const { record, ref } = await poolWithUsers(12);
    await expect(control.abort(record)).rejects.toMatchObject({ code: Code.FailedPrecondition });
    let copies = 0;
    let aborted: PoolRecord | undefined;
    await worker({
      async beforeStep(phase) {
        if (phase === "warm_copy" && ++copies === 2) aborted = await control.abort(await reload(record));
      },
    });
    await control.start(record, { target: target.url });
    const after = await settled(record);
    expect(aborted).toMatchObject({ state: "active", migration: null });
    expect(after).toMatchObject({ state: "active", migration: null, userStore: { kind: "managed" } });
    expect(await rowsIn(target.db, ref)).toBe(0);
    expect(await rowsIn(fixture.database.db, ref)).toBe(12);
  });

  it("resumes a migration whose process stopped mid-copy, in another worker", async () => {
    const { record, ref } = await poolWithUsers(13);
    let copies = 0;
    const first = await worker(
      {
        async beforeStep(phase) {
          if (phase === "warm_copy" && ++copies === 3) void first.stop({ keepLease: true });
        },
      },
      { leaseMs: 300 },
    );
    await control.start(record, { target: target.url });
    while (copies < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    await first.stop({ keepLease: true });
    const halfway = await reload(record);
    expect(halfway.migration).toMatchObject({ phase: "warm_copy", usersCopied: 12 });
    await worker();
    await expect(settled(record)).resolves.toMatchObject({
      state: "active",
      migration: null,
      userStore: { kind: "postgres" },
    });
    expect(await rowsIn(target.db, ref)).toBe(13);
  });

  it("migrates back to the managed store, keeping the source when asked", async () => {
    const { record, ref } = await poolWithUsers(3);
    await control.setUserStore(record, target.url);
    const there = (await context(record)).users;
    await there.create({ email: "remote@example.com", passwordHash });
    await expect(control.start(await reload(record), { target: target.url })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    await expect(control.start(await reload(record), { target: "k3+sa://a@b:1/c" })).rejects.toMatchObject({
      code: Code.FailedPrecondition,
    });
    await worker();
    await control.start(await reload(record), { target: "", keepSource: true });
    await expect(settled(record)).resolves.toMatchObject({
      state: "active",
      userStore: { kind: "managed" },
      sealedUserStoreUrl: null,
    });
    // The target ends up holding exactly the source's users: the three left behind by the
    // re-pointing are replaced, and the source keeps its copy.
    expect(await rowsIn(fixture.database.db, ref)).toBe(1);
    expect(await rowsIn(target.db, ref)).toBe(1);
    await expect(
      passwordGrant(services, await context(record), { email: "remote@example.com", password: PASSWORD }),
    ).resolves.toMatchObject({ token_type: "bearer" });
  });
});
