import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../../db/database.js";
import { platformExecutor } from "./sql-executor.js";
import { testPhysicalName } from "./engine-test-backends.js";
import { denseSearch } from "./collection-search.js";
import { VectorCollection } from "./vector-collection.js";

describe(`the engine on the platform database (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({
      dataDir: "memory://",
      databaseUrl: process.env.TEST_DATABASE_URL,
      maxConnections: 2,
    });
    await handle.db.execute("CREATE EXTENSION IF NOT EXISTS vector");
  }, 60_000);
  afterAll(() => handle?.close());

  it("runs collections through drizzle's driver client, transactions included", async () => {
    const collection = new VectorCollection(platformExecutor(handle), {
      physicalName: testPhysicalName(),
      dimensions: 2,
    });
    try {
      await collection.upsertObject("a", [{ chunkIndex: 0, content: "x", metadata: {}, embedding: [1, 0] }]);
      expect((await denseSearch(collection, [[1, 0]])).map((hit) => hit.id)).toEqual(["a#0"]);
      // A failing write rolls back whole: the object keeps its earlier chunk.
      await expect(
        collection.executor.transaction(async (tx) => {
          await tx.query(`DELETE FROM ${collection.tables.chunks}`);
          throw new Error("abort");
        }),
      ).rejects.toThrow("abort");
      expect(await collection.count()).toBe(1);
      expect((await collection.executor.query(`SELECT id FROM ${collection.tables.chunks}`)).length).toBe(1);
    } finally {
      await collection.drop();
    }
  });
});
