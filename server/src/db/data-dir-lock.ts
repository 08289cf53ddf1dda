import { open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";

/**
 * One process at a time may open an embedded database: PGlite keeps no cross-process locks of its
 * own, and two processes writing the same files corrupt them. The lock is a file holding the
 * owner's pid, created exclusively; a file left by a process that died is taken over.
 */
export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";
}

export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(dataDir, "embedded.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, "wx", 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => rm(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number((await readFile(path, "utf8").catch(() => "")).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
        throw new DataDirInUseError(
          `the embedded database in ${dataDir} is in use by process ${owner}: stop it, or point both at PostgreSQL with DATABASE_URL`,
        );
      }
      // Left by a process that is gone: take it over.
      await rm(path, { force: true });
    }
  }
  throw new DataDirInUseError(`could not lock ${path}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
