import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createScriptStore, type ScriptPublication, type ScriptStore } from "./script-store.js";

let database: TestDatabase;
let store: ScriptStore;
beforeAll(async () => {
  database = await openTestDatabase();
  store = createScriptStore(database.db);
});
afterAll(() => database.close());

const publication = (name: string, source: string): ScriptPublication => ({
  name,
  source,
  sourceSha256: `sha-${source}`,
  description: `about ${source}`,
  contract: { inputs: { type: "object" }, outputs: { type: "object" } },
  toolsRequired: ["http.request"],
});

describe(`script store (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("publishes versions 1, 2, ... and makes each active; the same source again publishes nothing", async () => {
    const org = await database.createOrganization();
    const first = await store.publish(org, publication("extract", "a"));
    expect([first.published, first.script.activeVersion, first.script.latestVersion]).toEqual([true, 1, 1]);
    const same = await store.publish(org, publication("extract", "a"));
    expect([same.published, same.script.latestVersion]).toEqual([false, 1]);
    const second = await store.publish(org, publication("extract", "b"));
    expect([second.published, second.script.activeVersion, second.script.latestVersion]).toEqual([true, 2, 2]);
    expect((await store.getVersion(org, "extract", 0))?.source).toBe("b");
    expect((await store.getVersion(org, "extract", 1))?.source).toBe("a");
    expect(await store.getVersion(org, "extract", 3)).toBeUndefined();
  });

  it("activates an earlier version, and refuses a missing one", async () => {
    const org = await database.createOrganization();
    await store.publish(org, publication("s", "a"));
    await store.publish(org, publication("s", "b"));
    expect((await store.activate(org, "s", 1))?.activeVersion).toBe(1);
    expect((await store.getVersion(org, "s", 0))?.source).toBe("a");
    expect(await store.activate(org, "s", 9)).toBeUndefined();
    // Publishing again makes the new version active.
    expect((await store.publish(org, publication("s", "c"))).script.activeVersion).toBe(3);
  });

  it("keeps concurrent publications of a new script consistent", async () => {
    const org = await database.createOrganization();
    const results = await Promise.all(
      ["a", "b", "c", "d"].map((source) => store.publish(org, publication("race", source))),
    );
    expect(results.filter((r) => r.published)).toHaveLength(4);
    expect((await store.get(org, "race"))?.latestVersion).toBe(4);
  });

  it("rolls the publication back when the work in the same transaction fails", async () => {
    const org = await database.createOrganization();
    await expect(
      store.publish(org, publication("atomic", "a"), async () => {
        throw new Error("seed failed");
      }),
    ).rejects.toThrow("seed failed");
    expect(await store.get(org, "atomic")).toBeUndefined();
  });

  it("lists by name a page at a time, and only the caller's organization", async () => {
    const org = await database.createOrganization();
    const other = await database.createOrganization();
    for (const name of ["b", "a", "c"]) await store.publish(org, publication(name, name));
    await store.publish(other, publication("zzz", "x"));
    expect((await store.list(org, "", 2)).map((s) => s.name)).toEqual(["a", "b"]);
    expect((await store.list(org, "b", 2)).map((s) => s.name)).toEqual(["c"]);
    expect(await store.get(other, "a")).toBeUndefined();
  });
});
