import { openDatabase, type DatabaseHandle } from "../src/db/database.js";
import { openTestDatabase, type TestDatabase } from "./test-database.js";

export interface TwoProcesses<P> {
  readonly database: TestDatabase;
  readonly here: P;
  readonly there: P;
  /** Stops both processes and closes the database. */
  close(): Promise<void>;
}

/**
 * A test database (see `openTestDatabase`) and two "processes" on it, each with its own pool and
 * listener, the way two server replicas run; on the embedded database there is one process, and
 * `here` and `there` are the same one.
 */
export async function openTwoProcesses<P extends { stop(): Promise<void> }>(
  processOn: (handle: DatabaseHandle) => Promise<P>,
): Promise<TwoProcesses<P>> {
  const database = await openTestDatabase();
  const here = await processOn(database.handle);
  const otherHandle = database.url
    ? await openDatabase({ dataDir: "memory://", databaseUrl: database.url, maxConnections: 2 })
    : undefined;
  const there = otherHandle ? await processOn(otherHandle) : here;
  return {
    database,
    here,
    there,
    async close() {
      if (there !== here) await there.stop();
      await here.stop();
      await otherHandle?.close();
      await database.close();
    },
  };
}

/** Polls until `check` holds; answers how long it took. Fails after `withinMs`. */
export async function within(withinMs: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
