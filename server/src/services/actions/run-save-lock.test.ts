import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { openTestDatabase, type TestDatabase } from "../../../test/test-database.js";
import { createRunSaveLock } from "./run-save-lock.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe(`saves of one run (${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"})`, () => {
  it("take turns, while saves of other runs do not wait", async () => {
    const org = await database.createOrganization();
    const lock = createRunSaveLock({ db: database.db });
    const order: string[] = [];
    const save = (name: string) => async () => {
      order.push(`${name} in`);
      await tick();
      await tick();
      order.push(`${name} out`);
      return name;
    };
    const results = await Promise.all([lock(org, "run-1", save("a")), lock(org, "run-1", save("b"))]);
    expect(results).toEqual(["a", "b"]);
    // Either may go first; the other enters only once the first is out.
    const first = order[0]?.slice(0, 1);
    const second = first === "a" ? "b" : "a";
    expect(order).toEqual([`${first} in`, `${first} out`, `${second} in`, `${second} out`]);

    // Saves of two runs are inside at the same time: each waits for the other to enter.
    let inside = 0;
    const together = async () => {
      inside++;
      for (let i = 0; inside < 2; i++) {
        if (i > 400) throw new Error("the other run's save never entered");
        await tick();
      }
    };
    await Promise.all([lock(org, "run-2", together), lock(org, "run-3", together)]);
  });

  it("free the run when a save fails, take over one left by a dead process, and give up after waiting", async () => {
    const org = await database.createOrganization();
    let clock = 1_000_000;
    const lock = createRunSaveLock({ db: database.db, now: () => clock, lapseMs: 60_000, waitMs: 0 });
    await expect(lock(org, "run-1", () => Promise.reject(new Error("disk full")))).rejects.toThrow("disk full");
    expect(await lock(org, "run-1", async () => "after a failure")).toBe("after a failure");

    // A save that never ends holds the run: the next gives up at once (waitMs 0) with ABORTED.
    let release = () => {};
    const held = lock(org, "run-1", () => new Promise<void>((resolve) => (release = resolve)));
    await tick();
    const refused = await lock(org, "run-1", async () => "late").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Aborted);
    // Past the lapse, the held save counts as dead and the run is taken over.
    clock += 60_001;
    expect(await lock(org, "run-1", async () => "taken over")).toBe("taken over");
    release();
    await held;
  });
});
