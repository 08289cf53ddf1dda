import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../../../db/database.js";
import { openTestDatabase, type TestDatabase } from "../../../../../test/test-database.js";
import { createCheckLogSignals, type CheckLogSignals } from "./check-log-signals.js";
import { createCheckStore, type CheckStore } from "./check-store.js";
import { followCheckLog } from "./follow-check-log.js";

let database: TestDatabase;
/** On PostgreSQL the writer is a second pool, as another server process would be. */
let writerHandle: DatabaseHandle;
let readerSignals: CheckLogSignals;
let writerSignals: CheckLogSignals;
let reader: CheckStore;
let writer: CheckStore;
beforeAll(async () => {
  database = await openTestDatabase();
  writerHandle = database.url
    ? await openDatabase({ dataDir: "memory://", databaseUrl: database.url, maxConnections: 2 })
    : database.handle;
  readerSignals = await createCheckLogSignals(database.handle);
  writerSignals = database.url ? await createCheckLogSignals(writerHandle) : readerSignals;
  reader = createCheckStore(database.db);
  writer = createCheckStore(writerHandle.db);
});
afterAll(async () => {
  await readerSignals.close();
  if (database.url) {
    await writerSignals.close();
    await writerHandle.close();
  }
  await database.close();
});

const sha = "c".repeat(40);

describe(`check log tail (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("replays, follows appends woken by signals, resumes after an offset and ends on completion", async () => {
    const orgId = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const check = await writer.create(orgId, {
      repoId,
      headSha: sha,
      name: "build",
      status: "in_progress",
      conclusion: null,
      detailsUrl: null,
      outputSummary: null,
    });
    await writer.appendLog(orgId, repoId, check.id, "one\n");
    const abort = new AbortController();
    // A poll this long would fail the test: only the signals can wake the tail in time.
    const tail = followCheckLog({
      store: reader,
      signals: readerSignals,
      orgId,
      repoId,
      checkId: check.id,
      afterOffset: -1,
      abort: abort.signal,
      pollMs: 60_000,
    });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const chunk of tail) seen.push(`${chunk.offset}:${chunk.text}`);
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toEqual(["0:one\n"]);

    await writer.appendLog(orgId, repoId, check.id, "two\n");
    await writerSignals.changed(check.id);
    await writer.appendLog(orgId, repoId, check.id, "three\n");
    await writerSignals.changed(check.id);
    await writer.update(orgId, repoId, check.id, { status: "completed", conclusion: "success" });
    await writerSignals.changed(check.id);
    await reading;
    expect(seen).toEqual(["0:one\n", "4:two\n", "8:three\n"]);

    // Resuming with Last-Event-ID 4 replays only what came after, then ends at once (completed).
    const resumed: number[] = [];
    for await (const chunk of followCheckLog({
      store: reader,
      signals: readerSignals,
      orgId,
      repoId,
      checkId: check.id,
      afterOffset: 4,
      abort: new AbortController().signal,
    })) {
      resumed.push(chunk.offset);
    }
    expect(resumed).toEqual([8]);
  });

  it("ends at once for another organization's check and when the reader aborts", async () => {
    const orgId = await database.createOrganization();
    const repoId = await database.createGitRepository(orgId);
    const check = await writer.create(orgId, {
      repoId,
      headSha: sha,
      name: "lint",
      status: "queued",
      conclusion: null,
      detailsUrl: null,
      outputSummary: null,
    });
    const otherOrg = await database.createOrganization();
    const foreign = followCheckLog({
      store: reader,
      signals: readerSignals,
      orgId: otherOrg,
      repoId,
      checkId: check.id,
      afterOffset: -1,
      abort: new AbortController().signal,
    });
    expect(await foreign.next()).toEqual({ done: true, value: undefined });

    const abort = new AbortController();
    const waiting = followCheckLog({
      store: reader,
      signals: readerSignals,
      orgId,
      repoId,
      checkId: check.id,
      afterOffset: -1,
      abort: abort.signal,
      pollMs: 60_000,
    });
    const next = waiting.next();
    setTimeout(() => abort.abort(), 100);
    expect(await next).toEqual({ done: true, value: undefined });
  });
});
