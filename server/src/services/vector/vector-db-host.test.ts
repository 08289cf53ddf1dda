import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { embeddedVectorDbHost, vectorDatabaseName } from "./vector-db-host.js";

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("embeddedVectorDbHost", () => {
  it("keeps each engine's tables in a schema of one vector database in the data directory", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "vector-host-"));
    dirs.push(dataDir);
    const a = vectorDatabaseName("0f8e4c1a-7b7e-4a53-9d3c-2c1b5e6f7a80");
    const b = vectorDatabaseName("1f8e4c1a-7b7e-4a53-9d3c-2c1b5e6f7a81");
    let host = embeddedVectorDbHost(dataDir);
    await host.create(a);
    await host.create(b);
    await host.create(a);
    const first = await host.connect(a);
    const second = await host.connect(b);
    // The same unqualified table name in two engines: each sees its own.
    await first.executor.query(`CREATE TABLE items (id int PRIMARY KEY, embedding vector(2))`);
    await second.executor.query(`CREATE TABLE items (id int PRIMARY KEY, embedding vector(2))`);
    await first.executor.transaction(async (tx) => {
      await tx.query(`INSERT INTO items VALUES (1, '[1,0]'), (2, '[0,1]')`);
    });
    await second.executor.query(`INSERT INTO items VALUES (7, '[1,1]')`);
    expect(await first.executor.query(`SELECT id FROM items ORDER BY embedding <=> '[1,0.1]' LIMIT 1`)).toEqual([
      { id: 1 },
    ]);
    expect(await second.executor.query(`SELECT count(*)::int AS n FROM items`)).toEqual([{ n: 1 }]);
    await host.close();
    expect((await stat(join(dataDir, "vector-db"))).isDirectory()).toBe(true);

    // Reopened, the rows are there; a dropped engine's schema is gone with its tables.
    host = embeddedVectorDbHost(dataDir);
    const again = await host.connect(a);
    expect(await again.executor.query(`SELECT count(*)::int AS n FROM items`)).toEqual([{ n: 2 }]);
    await host.drop(a);
    await expect(again.executor.query(`SELECT 1 FROM items`)).rejects.toThrow();
    expect(await (await host.connect(b)).executor.query(`SELECT id FROM items`)).toEqual([{ id: 7 }]);
    await host.close();
  });

  it("refuses names it did not generate", async () => {
    const host = embeddedVectorDbHost("memory://");
    await expect(host.create(`x"; DROP SCHEMA public; --`)).rejects.toThrow(/not a provisioned vector database name/);
    await host.close();
  });
});
