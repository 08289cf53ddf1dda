import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../../../test/test-database.js";
import { rollUpChecks } from "./check-rollup.js";
import { createCheckStore, type CheckCreate, type CheckStore } from "./check-store.js";

let database: TestDatabase;
let store: CheckStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createCheckStore(database.db);
});
afterAll(() => database.close());

const sha = "a".repeat(40);
const queued = (repoId: string, name: string): CheckCreate => ({
  repoId,
  headSha: sha,
  name,
  status: "queued",
  conclusion: null,
  detailsUrl: null,
  outputSummary: null,
});

describe(`check store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("creates, completes and lists the checks of a commit with their rollup", async () => {
    const orgId = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const build = await store.create(orgId, queued(repoId, "build"));
    const lint = await store.create(orgId, { ...queued(repoId, "lint"), status: "completed", conclusion: "success" });
    expect(build).toMatchObject({ name: "build", status: "queued", conclusion: null, completedAt: null, logBytes: 0 });
    expect(lint.completedAt).toEqual(expect.any(Number));
    expect(rollUpChecks(await store.listForCommit(orgId, repoId, sha))).toBe("pending");

    const failed = await store.update(orgId, repoId, build.id, { status: "completed", conclusion: "failure" });
    expect(failed).toMatchObject({ status: "completed", conclusion: "failure", completedAt: expect.any(Number) });
    expect(failed!.updatedAt).toBeGreaterThan(build.updatedAt);
    const listed = await store.listForCommit(orgId, repoId, sha);
    expect(listed.map((check) => check.name)).toEqual(["build", "lint"]);
    expect(rollUpChecks(listed)).toBe("failure");

    // A re-run moves the check back to in_progress and forgets its old verdict.
    const rerun = await store.update(orgId, repoId, build.id, { status: "in_progress" });
    expect(rerun).toMatchObject({ status: "in_progress", conclusion: null, completedAt: null });
    expect(await store.listForCommit(orgId, repoId, "b".repeat(40))).toEqual([]);
  });

  it("hides checks of another organization or repository", async () => {
    const orgId = await database.createOrganization();
    const otherOrg = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const check = await store.create(orgId, queued(repoId, "build"));
    expect(await store.get(otherOrg, repoId, check.id)).toBeUndefined();
    expect(await store.get(orgId, randomUUID(), check.id)).toBeUndefined();
    expect(await store.update(otherOrg, repoId, check.id, { status: "completed" })).toBeUndefined();
    expect(await store.appendLog(otherOrg, repoId, check.id, "x")).toBeUndefined();
    expect(await store.listForCommit(otherOrg, repoId, sha)).toEqual([]);
    expect(await store.readLog(check.id, -1)).toEqual([]);
  });

  it("appends log chunks at byte offsets, also from concurrent writers, and resumes after one", async () => {
    const orgId = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const check = await store.create(orgId, queued(repoId, "build"));
    expect(await store.appendLog(orgId, repoId, check.id, "héllo\n")).toEqual({ offset: 0, text: "héllo\n" });
    expect(await store.appendLog(orgId, repoId, check.id, "second\n")).toEqual({ offset: 7, text: "second\n" });
    const parallel = await Promise.all(
      Array.from({ length: 8 }, (_, index) => store.appendLog(orgId, repoId, check.id, `line ${index}\n`)),
    );
    const offsets = parallel.map((chunk) => chunk!.offset).sort((a, b) => a - b);
    expect(offsets).toEqual(Array.from({ length: 8 }, (_, index) => 14 + index * 7));

    const all = await store.readLog(check.id, -1);
    expect(all).toHaveLength(10);
    const whole = all.map((chunk) => chunk.text).join("");
    expect(Buffer.byteLength(whole)).toBe((await store.get(orgId, repoId, check.id))!.logBytes);
    expect((await store.readLog(check.id, 0)).map((chunk) => chunk.offset)[0]).toBe(7);
    expect(await store.readLog(check.id, offsets.at(-1)!)).toEqual([]);
    await expect(store.appendLog(orgId, repoId, check.id, "")).rejects.toThrow(RangeError);
  });
});
