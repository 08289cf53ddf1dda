import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { DataDirInUseError, lockDataDir } from "./data-dir-lock.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "lock-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it("is held by one process at a time and released on unlock", async () => {
  // Another live process holds it: this one is refused with a message naming that process.
  const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"]);
  await writeFile(join(dir, "embedded.lock"), `${other.pid}\n`);
  await expect(lockDataDir(dir)).rejects.toThrow(DataDirInUseError);
  await expect(lockDataDir(dir)).rejects.toThrow(`in use by process ${other.pid}`);
  other.kill();
  await new Promise((resolve) => other.once("exit", resolve));

  // The holder died without unlocking: the lock is taken over.
  const unlock = await lockDataDir(dir);
  expect((await readFile(join(dir, "embedded.lock"), "utf8")).trim()).toBe(String(process.pid));
  await unlock();
  await expect(readFile(join(dir, "embedded.lock"), "utf8")).rejects.toThrow();
  await (
    await lockDataDir(dir)
  )();
});
