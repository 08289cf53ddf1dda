import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createActionQueueStore, type ActionQueueStore, type NewQueueEntry } from "./action-queue-store.js";
import { actionQueue } from "./queue-schema.js";

let database: TestDatabase;
let store: ActionQueueStore;
let orgA: string;
let orgB: string;
const NOW = 1_700_000_000_000;
const LEASE = 30_000;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createActionQueueStore(database.db);
  orgA = await database.createOrganization();
  orgB = await database.createOrganization();
});
afterAll(() => database.close());
beforeEach(async () => {
  await database.db.delete(actionQueue);
});

function entry(orgId: string, enqueuedAt: number, overrides: Partial<NewQueueEntry> = {}): NewQueueEntry {
  return {
    runId: randomUUID(),
    orgId,
    bucket: "docs",
    actionId: "extract_text",
    batchId: "",
    reverseTs: String(9_999_999_999_999 - enqueuedAt).padStart(13, "0"),
    selection: { objectSingle: { bucket: "docs", key: "a.txt" } },
    params: { n: 1 },
    selectionLabel: "a.txt",
    enqueuedAt,
    ...overrides,
  };
}

it("claims the oldest queued row once, with a lease, and counts the attempt", async () => {
  const older = entry(orgA, NOW - 10);
  const newer = entry(orgA, NOW - 5);
  await store.enqueue([newer, older]);
  const first = await store.claim("w1", LEASE, 4, NOW);
  expect(first).toMatchObject({
    runId: older.runId,
    status: "running",
    leaseOwner: "w1",
    leaseExpiresAt: NOW + LEASE,
    attempts: 1,
    startedAt: NOW,
    selection: older.selection,
    params: older.params,
  });
  const second = await store.claim("w2", LEASE, 4, NOW);
  expect(second?.runId).toBe(newer.runId);
  expect(await store.claim("w3", LEASE, 4, NOW)).toBeUndefined();
});

it("enqueues a bulk all or nothing", async () => {
  const good = entry(orgA, NOW);
  await expect(store.enqueue([good, { ...entry(orgA, NOW), runId: good.runId }])).rejects.toThrow();
  expect(await store.get(orgA, good.runId)).toBeUndefined();
});

it("keeps a live lease from other workers and hands a lapsed one over with its thread", async () => {
  const row = entry(orgA, NOW);
  await store.enqueue([row]);
  await store.claim("w1", LEASE, 4, NOW);
  expect(await store.setThread(row.runId, "w1", "thread-1")).toBe(true);
  expect(await store.renew(row.runId, "w1", LEASE, NOW + 10_000)).toBe(true);
  // Renewed until NOW + 40 000: still held at NOW + 35 000.
  expect(await store.claim("w2", LEASE, 4, NOW + 35_000)).toBeUndefined();
  const taken = await store.claim("w2", LEASE, 4, NOW + 40_001);
  expect(taken).toMatchObject({
    runId: row.runId,
    leaseOwner: "w2",
    threadId: "thread-1",
    attempts: 2,
    startedAt: NOW,
  });
  // The first worker has lost it: it can neither renew, record a thread, nor end it.
  expect(await store.renew(row.runId, "w1", LEASE, NOW + 40_002)).toBe(false);
  expect(await store.setThread(row.runId, "w1", "thread-2")).toBe(false);
  expect(await store.finish(row.runId, "w1", NOW + 40_003)).toBe(false);
  expect(await store.finish(row.runId, "w2", NOW + 40_004)).toBe(true);
  expect(await store.get(orgA, row.runId)).toMatchObject({
    status: "done",
    finishedAt: NOW + 40_004,
    threadId: "thread-1",
  });
  expect(await store.claim("w3", LEASE, 4, NOW + 100_000)).toBeUndefined();
});

it("gives a released row to the next claim at once", async () => {
  const row = entry(orgA, NOW);
  await store.enqueue([row]);
  await store.claim("w1", LEASE, 4, NOW);
  await store.release(row.runId, "w1");
  expect(await store.claim("w2", LEASE, 4, NOW + 1)).toMatchObject({ runId: row.runId, leaseOwner: "w2" });
});

it("runs at most the bound per organization, and lets another organization's single run ahead of a bulk", async () => {
  const bulk = Array.from({ length: 50 }, (_, i) => entry(orgA, NOW - 1000 + i));
  await store.enqueue(bulk);
  const claimed: string[] = [];
  for (let i = 0; i < 3; i++) claimed.push((await store.claim(`w${i}`, LEASE, 3, NOW))!.orgId);
  expect(claimed).toEqual([orgA, orgA, orgA]);
  // The bound: organization A has 3 running, nothing more of it is handed out.
  expect(await store.claim("w9", LEASE, 3, NOW)).toBeUndefined();
  // B's run, enqueued after all of A's, goes first at the next free slot.
  const single = entry(orgB, NOW);
  await store.enqueue([single]);
  expect((await store.claim("w3", LEASE, 3, NOW))?.runId).toBe(single.runId);
});

it("alternates between organizations by their running counts", async () => {
  await store.enqueue([
    ...Array.from({ length: 10 }, (_, i) => entry(orgA, NOW - 100 + i)),
    ...Array.from({ length: 3 }, (_, i) => entry(orgB, NOW - 50 + i)),
  ]);
  const orgs: string[] = [];
  for (let i = 0; i < 6; i++) orgs.push((await store.claim(`w${i}`, LEASE, 10, NOW))!.orgId);
  expect(orgs).toEqual([orgA, orgB, orgA, orgB, orgA, orgB]);
});

it("does not count a lapsed lease as running for the bound", async () => {
  const [a1, a2] = [entry(orgA, NOW - 2), entry(orgA, NOW - 1)];
  await store.enqueue([a1, a2]);
  await store.claim("dead", LEASE, 1, NOW);
  expect(await store.claim("w1", LEASE, 1, NOW + 1)).toBeUndefined();
  // After the lapse, the dead worker's row is claimed again (older), within the bound.
  const taken = await store.claim("w1", LEASE, 1, NOW + LEASE + 1);
  expect(taken?.runId).toBe(a1.runId);
  expect(await store.claim("w2", LEASE, 1, NOW + LEASE + 2)).toBeUndefined();
});

it("never hands one row to two concurrent claims, nor passes the bound under concurrency", async () => {
  await store.enqueue(Array.from({ length: 20 }, (_, i) => entry(orgA, NOW + i)));
  const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => store.claim(`w${i}`, LEASE, 5, NOW)));
  const ids = claims.filter((row) => row !== undefined).map((row) => row.runId);
  expect(ids).toHaveLength(5);
  expect(new Set(ids).size).toBe(5);
});

it("lists the queued and running rows of a bucket in the caller's organization, and purges ended rows", async () => {
  const [running, ended, queued] = [entry(orgA, NOW - 3), entry(orgA, NOW - 2), entry(orgA, NOW - 1)];
  await store.enqueue([running, ended]);
  await store.claim("w", LEASE, 10, NOW);
  await store.claim("w", LEASE, 10, NOW);
  await store.finish(ended.runId, "w", NOW + 5);
  await store.enqueue([queued, entry(orgA, NOW, { bucket: "other" }), entry(orgB, NOW)]);
  const active = await store.listActive(orgA, "docs", 100);
  expect(active.map((row) => row.runId)).toEqual([running.runId, queued.runId]);
  expect(await store.listActive(orgB, "other", 100)).toEqual([]);
  expect(await store.purgeDone(NOW + 5)).toBe(0);
  expect(await store.purgeDone(NOW + 6)).toBe(1);
  expect(await store.get(orgA, ended.runId)).toBeUndefined();
});
